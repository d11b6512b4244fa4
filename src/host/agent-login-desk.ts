import { randomUUID } from "node:crypto";
import { RequestError, type AuthenticateRequest } from "@agentclientprotocol/sdk";
import type { Clock } from "../lifecycle/clock.js";
import { dataPaths } from "../config/paths.js";
import { authMethodsOf, type AuthMethodView } from "../protocol/auth-methods.js";
import { loginOf } from "./agent-logins.js";
import type { AgentsOutsideSessions, Asker } from "./agents-outside-sessions.js";
import { BrowserCapture } from "./browser-capture.js";
import { callbackTarget, deliverCallback } from "./login-callback.js";
import type { Logger } from "./logger.js";
import { CodedError } from "../protocol/coded-error.js";

/**
 * Where a login is: its agent starting, the address it opened captured (the person opens it on their
 * device), the pasted address handed to its callback, and how it ended.
 */
type AgentLoginState = "starting" | "address_captured" | "callback_delivered" | "logged_in" | "failed";

/** A login as clients see it: never the values handed over for it. */
export interface AgentLoginView {
  readonly id: string;
  readonly agent: string;
  readonly methodId: string;
  readonly state: AgentLoginState;
  /** The address the agent asked to open in a browser (its latest). */
  readonly address?: string;
  /** Why it failed: the agent's own answer. */
  readonly error?: string;
  readonly startedAt: string;
}

/** A login that is not there, or not where the asked step can happen. */
export class AgentLoginError extends CodedError<"agent_login_not_found" | "login_not_waiting" | "invalid_login"> {
  override readonly name = "AgentLoginError";
}

/** A login nobody finishes is given up (its agent stopped) after this long. */
const LOGIN_TIMEOUT_MS = 10 * 60_000;
/** How long an ended login stays listed, for a page that looks again. */
const ENDED_KEPT_MS = 10 * 60_000;
/** How long a delivered callback waits for the `authenticate` to end before answering with the state so far. */
const SETTLE_WAIT_MS = 30_000;

interface Entry {
  view: AgentLoginView;
  readonly done: Promise<unknown>;
}

/**
 * Every `authenticate` the host runs, with where it is: a client's over ACP and one started over REST
 * alike. Its child's attempts to open a browser are captured ({@link BrowserCapture}), so a person on
 * another device opens the address there and pastes back where their browser ended; Berth hands that to
 * the agent's callback on this host's loopback.
 */
export class AgentLoginDesk {
  private readonly entries = new Map<string, Entry>();
  /** Waits on a login's view changing ({@link changed}). */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly deps: {
      readonly outside: AgentsOutsideSessions;
      /** The shims are written under it, in `login-browser/`. */
      readonly dataDir: string;
      readonly clock: Clock;
      readonly log: Logger;
    },
  ) {}

  /** The agent's auth methods, as a page chooses how to log in. */
  async methods(agentId: string): Promise<AuthMethodView[]> {
    return authMethodsOf((await this.deps.outside.profile(agentId)).authMethods);
  }

  /** The agent's logins running now or ended lately, oldest first. */
  list(agentId: string): AgentLoginView[] {
    return [...this.entries.values()].filter((entry) => entry.view.agent === agentId).map((entry) => entry.view);
  }

  /** A client's `authenticate` over ACP: answered as the agent answers it, listed meanwhile. */
  authenticate(agentId: string, request: AuthenticateRequest, asker: Asker): Promise<unknown> {
    return this.run(agentId, request, asker).done;
  }

  /**
   * An `authenticate` started for a page or the CLI: answered once the agent opened an address (to be
   * opened on the person's device) or the login ended, whichever is first, or with the login as it is
   * once `signal` aborts (the client left). It runs on without its asker, until it ends or
   * {@link LOGIN_TIMEOUT_MS}, listed meanwhile. A login of the agent by the same method that has not ended
   * is answered again rather than another started.
   */
  async start(agentId: string, request: AuthenticateRequest, signal?: AbortSignal): Promise<AgentLoginView> {
    const { authMethods } = await this.deps.outside.profile(agentId);
    const methods = authMethodsOf(authMethods);
    const method = methods.find((m) => m.id === request.methodId);
    if (!method)
      throw new AgentLoginError(
        "invalid_login",
        `agent "${agentId}" has no auth method "${request.methodId}" (it has ${methods.map((m) => `"${m.id}"`).join(", ") || "none"})`,
      );
    // ACP forbids `authenticate` with a terminal method: it runs in a pseudo-terminal instead.
    if (method.type === "terminal")
      throw new AgentLoginError(
        "invalid_login",
        `auth method "${method.id}" of agent "${agentId}" is a terminal login: run \`berth login --agent ${agentId} --method ${method.id}\`, or open #/agents/${agentId}/login/${method.id}/terminal on the dashboard`,
      );
    try {
      loginOf(request, authMethods);
    } catch (error) {
      if (error instanceof RequestError) throw new AgentLoginError("invalid_login", error.message);
      throw error;
    }
    const id = this.running(agentId, request.methodId)?.view.id ?? this.run(agentId, request, { signal: AbortSignal.timeout(LOGIN_TIMEOUT_MS) }).id;
    await this.changed(id, (view) => view.state !== "starting", signal);
    return this.require(agentId, id).view;
  }

  /** The address the person's browser ended on, handed to the agent's callback; answered with the login once it ended (or after a while). */
  async deliver(agentId: string, loginId: string, pasted: string, signal?: AbortSignal): Promise<AgentLoginView> {
    const entry = this.require(agentId, loginId);
    const { state, address } = entry.view;
    if (state !== "address_captured" && state !== "callback_delivered")
      throw new AgentLoginError(
        "login_not_waiting",
        state === "starting" ? `login "${loginId}" has not opened an address yet` : `login "${loginId}" already ended: ${state}`,
      );
    await deliverCallback(callbackTarget(address!, pasted), signal);
    if (entry.view.state === "address_captured") entry.view = { ...entry.view, state: "callback_delivered" };
    const settleWait = AbortSignal.any([AbortSignal.timeout(SETTLE_WAIT_MS), ...(signal ? [signal] : [])]);
    await Promise.race([entry.done.catch(() => undefined), aborted(settleWait)]);
    return entry.view;
  }

  private run(agentId: string, request: AuthenticateRequest, asker: Asker): { id: string; done: Promise<unknown> } {
    const id = randomUUID();
    const set = (change: Partial<AgentLoginView>) => {
      const entry = this.entries.get(id);
      if (entry) entry.view = { ...entry.view, ...change };
      this.wake();
    };
    const done = (async () => {
      const capture = await BrowserCapture.open(dataPaths(this.deps.dataDir).loginBrowser, (address) =>
        set({ address, ...(this.entries.get(id)?.view.state === "starting" ? { state: "address_captured" } : {}) }),
      );
      try {
        return await this.deps.outside.authenticate(agentId, request, asker, capture);
      } finally {
        await capture.close();
      }
    })();
    const view: AgentLoginView = {
      id,
      agent: agentId,
      methodId: request.methodId,
      state: "starting",
      startedAt: new Date(this.deps.clock.now()).toISOString(),
    };
    this.entries.set(id, { view, done });
    const ended = (change: Partial<AgentLoginView>) => {
      set(change);
      this.deps.log.info({ agent: agentId, methodId: request.methodId, login: id, state: change.state, error: change.error }, "agent login ended");
    };
    done.then(
      () => ended({ state: "logged_in" }),
      (error: unknown) => ended({ state: "failed", error: error instanceof Error ? error.message : String(error) }),
    );
    // Listed a while after it ended; the timer does not hold the host up.
    const forget = () => setTimeout(() => this.entries.delete(id), ENDED_KEPT_MS).unref();
    done.then(forget, forget);
    return { id, done };
  }

  private running(agentId: string, methodId: string): Entry | undefined {
    return [...this.entries.values()].find(
      ({ view }) => view.agent === agentId && view.methodId === methodId && view.state !== "logged_in" && view.state !== "failed",
    );
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once the login's view meets `condition`, or `signal` aborted. */
  private changed(id: string, condition: (view: AgentLoginView) => boolean, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        const view = this.entries.get(id)?.view;
        if (view && !condition(view) && !signal?.aborted) return;
        this.waiters.delete(check);
        signal?.removeEventListener("abort", check);
        resolve();
      };
      this.waiters.add(check);
      signal?.addEventListener("abort", check, { once: true });
      check();
    });
  }

  private require(agentId: string, loginId: string): Entry {
    const entry = this.entries.get(loginId);
    if (!entry || entry.view.agent !== agentId) throw new AgentLoginError("agent_login_not_found", `no login "${loginId}" of agent "${agentId}"`);
    return entry;
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
