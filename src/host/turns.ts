import { randomUUID } from "node:crypto";
import { RequestError, type ContentBlock, type PromptRequest, type PromptResponse, type StopReason } from "@agentclientprotocol/sdk";
import type { AgentChild } from "../agents/agent-child.js";
import type { ClientFiles } from "../agents/agent-client-handlers.js";
import type { Clock, Timer } from "../lifecycle/clock.js";
import type { Executions, InterruptReason } from "../lifecycle/executions.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import type { SessionHolds } from "../lifecycle/session-holds.js";
import { formatDuration } from "../config/durations.js";
import type { Store } from "../store/store.js";
import { locationOf } from "./session-location.js";
import { generatedTitle } from "./session-titles.js";
import { SessionNotFoundError } from "./agent-children.js";
import type { AgentLoginStates } from "./agent-login-states.js";
import type { HostRecord } from "./host-records.js";
import type { Journal } from "./journal.js";
import type { QuestionDesk } from "./question-desk.js";
import type { SessionBus } from "./session-bus.js";
import { TurnOrder } from "./turn-order.js";

export class TurnFailedError extends Error {
  override readonly name = "TurnFailedError";
}

/** The store refused the turn's end (its session is another host's now): no stop reason is given for a turn it may lack. */
export class TurnNotStoredError extends Error {
  override readonly name = "TurnNotStoredError";
}

/** Who sent a prompt, and how it may run. */
export interface PromptOptions {
  /** Names the prompter in the `turn_started` event the prompt publishes. */
  readonly origin?: string | undefined;
  /**
   * The prompting client's files, when it declared any (`clientCapabilities.fs`); they answer the agent's `fs/*` sent
   * while it works on this prompt (by the order on the wire, when several are in flight: prompts-in-flight.ts).
   */
  readonly files?: ClientFiles | undefined;
  /** Refused (TurnAlreadyRunningError) rather than joining a turn that runs already. */
  readonly exclusive?: boolean;
}

export interface TurnsDeps {
  readonly store: Store;
  readonly holds: SessionHolds<AgentChild>;
  readonly executions: Executions;
  readonly journal: Journal;
  readonly bus: SessionBus;
  readonly desk: QuestionDesk;
  readonly clock: Clock;
  readonly record: (record: HostRecord) => void;
  /** How long an interrupted turn may take to settle before its agent is stopped. */
  readonly interruptTimeoutMs: number;
  /** Stops a child that did not settle its interrupted turn (the session becomes childless). */
  readonly stopUnresponsive: (sessionId: string, child: AgentChild) => Promise<void>;
  readonly maxActiveHoldMs: number;
  /** Told whether a prompt was refused for want of a login. */
  readonly loginStates: AgentLoginStates;
  /** What failed: stopping an agent that did not settle an interrupted turn, or journaling an answer that came early. */
  readonly onError: (error: unknown, sessionId: string, failed: "stop_unresponsive" | "journal_early_answer") => void;
}

/** Runs prompts as turns: acquire the child, journal start, every update and end, settle. */
export class Turns {
  /** By session, the deadline for its interrupted turn to settle; cancelled at shutdown, which stops every child itself. */
  private readonly settleDeadlines = new Map<string, Timer>();
  private readonly order = new TurnOrder();

  constructor(private readonly deps: TurnsDeps) {}

  /** Shutdown: no deadline fires on a host whose store is closing. */
  cancelSettleDeadlines(): void {
    for (const timer of this.settleDeadlines.values()) timer.cancel();
    this.settleDeadlines.clear();
  }

  /**
   * Runs one prompt as a turn. A prompt sent while the session's turn runs goes to the agent at once (it queues it, or
   * cancels the first: its business) and joins that turn; its own turn starts in the journal when the one before it
   * ended (see {@link TurnOrder}); an `exclusive` one is refused instead.
   */
  async prompt(
    sessionId: string,
    prompt: ContentBlock[],
    extra: Omit<PromptRequest, "sessionId" | "prompt">,
    { origin, files, exclusive }: PromptOptions = {},
  ): Promise<PromptResponse> {
    const { store, holds, executions } = this.deps;
    const session = store.sessions.get(sessionId);
    if (!session) throw new SessionNotFoundError(sessionId);
    const key = locationOf(session);
    // The turn itself holds the child while it runs; holders come and go around it.
    const ticket = holds.hold(sessionId, `turn:${randomUUID()}`);
    try {
      const child = await ticket.child;
      const turn = executions.begin(sessionId, key, (reason) => this.interrupted(sessionId, key, child, reason), { exclusive });
      const place = this.order.enter(sessionId);
      const journaled: JournaledTurn = { sessionId, key, prompt, origin, titled: session.title !== null || place.previous !== undefined };
      const send = () => this.deps.loginStates.observe(child.agentId, child.prompt({ ...extra, prompt }, files));
      let outcome: TurnOutcome | undefined;
      try {
        if (place.previous === undefined) {
          outcome = await this.journaled(journaled, send).finally(() => place.leave());
        } else {
          // Sent now, as directly; journaled once the turn before it ended.
          const answer = outcomeOf(send());
          const turnCame = await Promise.race([place.previous.then(() => true), answer.then(() => false)]);
          if (turnCame) outcome = await this.journaled(journaled, () => answer.then(answerOf)).finally(() => place.leave());
          else {
            // Answered before its turn came (an agent that refused it): the client is not kept waiting for the turn
            // before it; the journal has it in its place.
            const late = await answer;
            outcome = late;
            void place.previous
              .then(() => this.journaled(journaled, () => Promise.resolve(late).then(answerOf)))
              .catch((error: unknown) => this.deps.onError(error, sessionId, "journal_early_answer"))
              .finally(() => place.leave());
          }
        }
      } finally {
        // Whatever failed (the agent, a full disk), the prompt settles: nothing may stay active forever.
        const settlement = turn.settle(outcome === undefined || "rejected" in outcome ? "failed" : "completed");
        // An agent that cancelled only its running prompt may start one it queued: that one is cancelled too.
        const left = settlement === undefined ? executions.get(sessionId) : undefined;
        if (left?.state.name === "interrupting") this.cancelAgentTurn(sessionId, child, left.state.reason);
      }
      this.deps.journal.touchSession(sessionId, this.deps.clock.now());
      // The answer follows the turn's events: clients see every update before the prompt's response, which waits for a
      // store that cannot write yet (they are tried until stored).
      await new Promise<void>((resolve) => this.deps.journal.afterCommit(resolve));
      // The agent's own refusal reaches the client as the agent sent it (code, message, data).
      if ("rejected" in outcome) {
        if (outcome.rejected instanceof RequestError) throw outcome.rejected;
        if (outcome.unstored === undefined) throw new TurnFailedError(`the turn failed: ${messageOf(outcome.rejected)}`);
      }
      // Never a stop reason for a turn the journal lacks: the client learns it was not stored.
      if (outcome.unstored !== undefined) throw new TurnNotStoredError(`the turn ended but was not stored: ${outcome.unstored}`);
      return (outcome as { value: PromptResponse }).value;
    } finally {
      ticket.release();
    }
  }

  /** Journals a turn around `run` (the agent's answer): its start, then its end whatever failed, and settles nothing. */
  private async journaled(turn: JournaledTurn, run: () => Promise<PromptResponse>): Promise<TurnOutcome> {
    const { journal, bus, clock, record } = this.deps;
    const { sessionId, key, prompt, origin } = turn;
    let outcome: TurnOutcome;
    try {
      journal.append(sessionId, key, "turn_started", { prompt }, { then: (seq) => bus.publish(sessionId, { type: "turn_started", seq, origin }) });
      journal.touchSession(sessionId, clock.now());
      if (!turn.titled) journal.titleSession(sessionId, titleOf(prompt));
      record({ kind: "turn_started", sessionId });
      outcome = { value: await run() };
    } catch (caught) {
      outcome = { rejected: caught };
    }
    // Whatever failed above (the agent, a full disk), the turn ends: nothing may stay active forever.
    const stopReason: StopReason | null = "value" in outcome ? outcome.value.stopReason : null;
    const error = "rejected" in outcome ? messageOf(outcome.rejected) : null;
    let unstored: string | undefined;
    journal.append(
      sessionId,
      key,
      "turn_ended",
      { stopReason, error },
      {
        then: (seq) => {
          bus.publish(sessionId, { type: "turn_ended", seq, stopReason, error });
          journal.tellWorkDone(sessionId);
        },
        refused: (why) => (unstored = why),
      },
    );
    record({ kind: "turn_ended", sessionId, stopReason, error });
    return {
      ...outcome,
      get unstored() {
        return unstored;
      },
    };
  }

  /** `session/cancel` from a client: interrupts the running turn; false if none runs. */
  cancel(sessionId: string): Promise<boolean> {
    return this.deps.executions.interrupt(sessionId, { reason: "user" });
  }

  private interrupted(sessionId: string, key: LocationKey, child: AgentChild, reason: InterruptReason): void {
    const { journal } = this.deps;
    journal.append(sessionId, key, "interrupted", { reason });
    const notice = noticeFor(reason, this.deps.maxActiveHoldMs);
    if (notice) journal.notice(sessionId, key, notice, { kind: "interrupted", reason });
    this.cancelAgentTurn(sessionId, child, reason);
  }

  /**
   * Sends the agent `session/cancel` and gives it `interruptTimeout` from now to answer every prompt of the turn; each
   * cancel (the first, and again when the agent answered one prompt and others remain) restarts the deadline.
   */
  private cancelAgentTurn(sessionId: string, child: AgentChild, reason: InterruptReason): void {
    const { desk, clock, executions } = this.deps;
    // ACP: a client that cancels answers the agent's outstanding requests as cancelled.
    desk.cancelForSession(sessionId, reason);
    void child.cancel();
    // An agent that ignores the cancel is stopped, so the turn settles and nothing waits forever.
    this.settleDeadlines.get(sessionId)?.cancel();
    const timer = clock.setTimeout(() => {
      this.settleDeadlines.delete(sessionId);
      if (executions.isActive(sessionId)) {
        void this.deps.stopUnresponsive(sessionId, child).catch((error: unknown) => this.deps.onError(error, sessionId, "stop_unresponsive"));
      }
    }, this.deps.interruptTimeoutMs);
    this.settleDeadlines.set(sessionId, timer);
    void executions.settled(sessionId)?.then(() => {
      timer.cancel();
      if (this.settleDeadlines.get(sessionId) === timer) this.settleDeadlines.delete(sessionId);
    });
  }
}

function noticeFor(reason: InterruptReason, maxActiveHoldMs: number): string | undefined {
  if (reason === "inactivity") {
    return `Berth interrupted this turn (reason: inactivity): nothing was recorded for ${formatDuration(maxActiveHoldMs)}, the longest a silent session may hold its location. Its resources are being released.`;
  }
  if (reason === "shutdown") return "Berth interrupted this turn (reason: shutdown): the host is shutting down.";
  return undefined;
}

/** A prompt's turn as the journal records it. */
interface JournaledTurn {
  readonly sessionId: string;
  readonly key: LocationKey;
  readonly prompt: ContentBlock[];
  readonly origin: string | undefined;
  /** The session has a title already, or an earlier prompt gives it one. */
  readonly titled: boolean;
}

/** How the agent answered a prompt, and why the store refused its turn's end if it did (known once committed). */
type TurnOutcome = ({ readonly value: PromptResponse } | { readonly rejected: unknown }) & { readonly unstored?: string | undefined };

function outcomeOf(answer: Promise<PromptResponse>): Promise<TurnOutcome> {
  return answer.then(
    (value) => ({ value }),
    (rejected: unknown) => ({ rejected }),
  );
}

function answerOf(outcome: TurnOutcome): PromptResponse {
  if ("rejected" in outcome) throw outcome.rejected;
  return outcome.value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function titleOf(prompt: ContentBlock[]): string {
  return generatedTitle(prompt.map((block) => (block.type === "text" ? block.text : "")).join("\n")) ?? "untitled";
}
