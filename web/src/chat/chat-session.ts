import {
  client,
  methods,
  PROTOCOL_VERSION,
  type ClientConnection,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type ElicitationContentValue,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { authorizedUrl } from "../auth/token.js";
import { api } from "../api/rest.js";
import type { QuestionAnswer } from "../api/types.js";
import { Observable } from "../live/observable.js";
import { applyUpdate, appendPrompt, appendStop, type Transcript } from "./transcript.js";
import {
  controlsOfAnswer,
  controlsWithChange,
  controlsWithTurnUsage,
  controlsWithUpdate,
  noControls,
  requestOf,
  type AgentControls,
  type ControlChange,
} from "./agent-controls.js";

/** Where a chat is in its life. Only `ready` accepts a prompt. */
export type ChatPhase =
  | { readonly name: "connecting" }
  | { readonly name: "opening" }
  | { readonly name: "ready" }
  | { readonly name: "prompting" }
  | { readonly name: "closed" }
  | { readonly name: "failed"; readonly message: string };

/** A question the agent asked this connection, waiting for the person at the page. */
export type ChatAsk =
  | { readonly kind: "permission"; readonly id: number; readonly request: RequestPermissionRequest }
  | { readonly kind: "elicitation"; readonly id: number; readonly request: CreateElicitationRequest };

type ChatAnswer = RequestPermissionResponse | CreateElicitationResponse;

export interface ChatState {
  readonly phase: ChatPhase;
  readonly sessionId: string | null;
  readonly transcript: Transcript;
  readonly asks: readonly ChatAsk[];
}

/** How the chat opens its session: an existing one (replaying its journal), or a new one. */
export type ChatOpening =
  | { readonly mode: "load"; readonly sessionId: string }
  | { readonly mode: "new"; readonly agent: string; readonly cwd: string; readonly workspace: string | null };

const CLIENT_INFO = { name: "berth-dashboard", title: "Berth dashboard", version: __BERTH_VERSION__ };

/**
 * One session opened over ACP (WebSocket `/acp`): Berth is the agent, this page the client. Opening
 * holds the session, which keeps its agent child warm; `close()` releases the hold.
 */
export class ChatSession {
  readonly state: Observable<ChatState>;
  /** The agent's mode, model, config options and usage for this session: the chat header's pickers. */
  readonly controls = new Observable<AgentControls>(noControls);
  /** The session's id once it is open; rejects with a message naming what went wrong. */
  readonly opened: Promise<string>;
  private readonly connection: ClientConnection;
  private readonly waiting = new Map<number, (answer: ChatAnswer) => void>();
  private nextAskId = 1;

  private constructor(opening: ChatOpening) {
    this.state = new Observable<ChatState>({
      phase: { name: "connecting" },
      sessionId: opening.mode === "load" ? opening.sessionId : null,
      transcript: [],
      asks: [],
    });
    const app = client({ name: "berth-dashboard" })
      .onNotification(methods.client.session.update, ({ params }) => this.updated(params))
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) => this.ask({ kind: "permission", request: params }, signal))
      .onRequest(methods.client.elicitation.create, ({ params, signal }) => this.ask({ kind: "elicitation", request: params }, signal));
    this.connection = app.connect(createWebSocketStream(authorizedUrl("acp", "ws")));
    void this.connection.closed.then(() => this.lost());
    this.opened = this.open(opening);
    this.opened.catch(() => undefined);
  }

  static open(opening: ChatOpening): ChatSession {
    return new ChatSession(opening);
  }

  /** Read through a call: the phase moves while a request is awaited, so it must not be narrowed. */
  private phase(): ChatPhase["name"] {
    return this.state.value.phase.name;
  }

  get sessionId(): string | null {
    return this.state.value.sessionId;
  }

  async prompt(text: string): Promise<void> {
    const sessionId = this.sessionId;
    if (this.phase() !== "ready" || sessionId === null) return;
    this.patch({ phase: { name: "prompting" }, transcript: appendPrompt(this.state.value.transcript, text) });
    let outcome: string;
    try {
      const response = await this.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      outcome = response.stopReason;
      // `usage` is in ACP's unstable schema, not the stable one the SDK types this answer with.
      this.controls.set(controlsWithTurnUsage(this.controls.value, (response as { usage?: unknown }).usage));
    } catch (error) {
      outcome = `failed: ${messageOf(error)}`;
    }
    if (this.phase() !== "prompting") return;
    this.patch({
      phase: { name: "ready" },
      transcript: outcome === "end_turn" ? this.state.value.transcript : appendStop(this.state.value.transcript, outcome),
    });
  }

  /** Interrupts the running turn, whoever started it. */
  cancel(): void {
    const sessionId = this.sessionId;
    if (sessionId !== null) void this.connection.agent.notify(methods.agent.session.cancel, { sessionId });
  }

  /** Answers a question the agent asked this connection, in the shape REST uses too. */
  answer(askId: number, answer: QuestionAnswer): void {
    this.waiting.get(askId)?.(acpAnswer(answer));
  }

  /** Sets the agent's mode, model or a config option over ACP; rejects with the agent's message. */
  async configure(change: ControlChange): Promise<void> {
    const sessionId = this.sessionId;
    if (sessionId === null) return;
    const { method, params } = requestOf(change, sessionId, this.controls.value);
    let result: unknown;
    try {
      result = await this.connection.agent.request(method, params);
    } catch (error) {
      throw new Error(messageOf(error));
    }
    this.controls.set(controlsWithChange(this.controls.value, change, result));
  }

  /** Releases this page's hold on the session (it stays) and disconnects. */
  async close(): Promise<void> {
    const { phase, sessionId } = this.state.value;
    if (phase.name === "closed") return;
    this.patch({ phase: { name: "closed" } });
    if (sessionId !== null && phase.name !== "failed") {
      await this.connection.agent.request(methods.agent.session.close, { sessionId }).catch(() => undefined);
    }
    this.connection.close();
  }

  private async open(opening: ChatOpening): Promise<string> {
    let sessionId: string;
    try {
      const agent = this.connection.agent;
      await agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { elicitation: { form: {} } },
        clientInfo: CLIENT_INFO,
      });
      this.patch({ phase: { name: "opening" } });
      if (opening.mode === "load") {
        // session/load needs the session's directory; the replay arrives as updates before the answer.
        const { cwd } = await api.session(opening.sessionId);
        const answer = await agent.request(methods.agent.session.load, { sessionId: opening.sessionId, cwd, mcpServers: [] });
        // The replay's usage updates came before the answer: they are kept.
        this.controls.set(controlsOfAnswer(answer, this.controls.value.usage));
        sessionId = opening.sessionId;
      } else {
        const meta: Record<string, string> = { "berth/agent": opening.agent };
        if (opening.workspace !== null) meta["berth/workspace"] = opening.workspace;
        const answer = await agent.request(methods.agent.session.new, {
          cwd: opening.cwd,
          mcpServers: [],
          _meta: meta,
        });
        sessionId = answer.sessionId;
        this.controls.set(controlsOfAnswer(answer));
        this.patch({ sessionId });
      }
      if (this.phase() === "opening") this.patch({ phase: { name: "ready" } });
      return sessionId;
    } catch (error) {
      this.fail(messageOf(error));
      throw new Error(messageOf(error));
    }
  }

  private updated(notification: SessionNotification): void {
    if (notification.sessionId !== this.sessionId) return;
    const controls = controlsWithUpdate(this.controls.value, notification.update);
    if (controls) this.controls.set(controls);
    this.patch({ transcript: applyUpdate(this.state.value.transcript, notification.update) });
  }

  /** Shows the question until it is answered here, or withdrawn (answered elsewhere, cancelled). */
  private ask<A extends ChatAnswer>(question: Omit<ChatAsk, "id">, signal: AbortSignal): Promise<A> {
    const id = this.nextAskId++;
    const withdraw = (): void => {
      this.waiting.delete(id);
      this.patch({ asks: this.state.value.asks.filter((a) => a.id !== id) });
    };
    this.patch({ asks: [...this.state.value.asks, { ...question, id } as ChatAsk] });
    return new Promise<A>((resolve, reject) => {
      this.waiting.set(id, (answer) => {
        withdraw();
        resolve(answer as A);
      });
      signal.addEventListener(
        "abort",
        () => {
          withdraw();
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  private lost(): void {
    if (this.phase() !== "closed") this.fail("The connection to Berth was lost.");
  }

  private fail(message: string): void {
    if (this.phase() === "closed") return;
    this.patch({ phase: { name: "failed", message }, asks: [] });
    this.waiting.clear();
    this.connection.close();
  }

  private patch(change: Partial<ChatState>): void {
    this.state.set({ ...this.state.value, ...change });
  }
}

function acpAnswer(answer: QuestionAnswer): ChatAnswer {
  if ("optionId" in answer) return { outcome: { outcome: "selected", optionId: answer.optionId } };
  return answer.action === "accept"
    ? { action: "accept", content: answer.content as Record<string, ElicitationContentValue> }
    : { action: answer.action };
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const data = (error as { data?: unknown }).data;
    const detail = typeof data === "object" && data !== null && "message" in data ? String(data.message) : null;
    return detail && !error.message.includes(detail) ? `${error.message}: ${detail}` : error.message;
  }
  return String(error);
}
