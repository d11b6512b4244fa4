import { randomUUID } from "node:crypto";
import {
  methods,
  RequestError,
  type AgentContext,
  type ClientCapabilities,
  type Implementation,
  type McpServer,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import type { ConversationEntry } from "./conversation-store.js";
import type { DemoSession, SessionRegistry } from "./session-registry.js";
import type { SessionSettings } from "./session-state.js";
import type { UsageMeter } from "./usage.js";

/** The client of this connection, as it introduced itself in `initialize`. */
export interface ClientPeer {
  info: Implementation | null;
  capabilities: ClientCapabilities;
}

/** One `session/prompt` in flight: what a command needs to talk to the client. */
export class Turn {
  constructor(
    private readonly session: DemoSession,
    private readonly sessions: SessionRegistry,
    /** Calls client-side methods (`terminal/*`, permissions, elicitations). */
    readonly client: AgentContext,
    readonly peer: ClientPeer,
    /** Counts the agent text this turn streams, for the response's `usage`. */
    private readonly meter: UsageMeter,
    /** Aborted by `session/cancel` or `session/close`. */
    readonly cancelled: AbortSignal,
  ) {}

  get sessionId(): string {
    return this.session.id;
  }

  get cwd(): string {
    return this.session.conversation.cwd;
  }

  get mcpServers(): McpServer[] {
    return this.session.mcpServers;
  }

  /** The conversation's user messages before this turn's own (recorded as the turn began). */
  get promptsBefore(): number {
    return this.session.conversation.entries.filter((entry) => entry.kind === "user_message").length - 1;
  }

  get settings(): SessionSettings {
    return this.sessions.settingsOf(this.session);
  }

  send(update: SessionUpdate): Promise<void> {
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      this.meter.countOutput(update.content.text);
    }
    return this.client.notify(methods.client.session.update, { sessionId: this.session.id, update });
  }

  /** Streams `text` as one agent message of `pieces` chunks, and records it. */
  async say(text: string, pieces = 1): Promise<void> {
    const messageId = randomUUID();
    for (const piece of splitText(text, pieces)) {
      await this.send({
        sessionUpdate: "agent_message_chunk",
        messageId,
        content: { type: "text", text: piece },
      });
    }
    this.append({ kind: "agent_message", messageId, text });
  }

  append(entry: ConversationEntry): void {
    this.sessions.append(this.session, entry);
  }
}

/**
 * What the agent does with a prompt sent while a turn runs: refuse it, queue it after the running turn (as opencode,
 * Claude and Codex do), or cancel the running turn and run it next (as Gemini does). `queue-past-cancel` queues it too,
 * but `session/cancel` ends only the running turn: the queued prompt runs next (an agent Berth must cancel again).
 */
export type BusyPrompt = "refuse" | "queue" | "queue-past-cancel" | "cancel";
export const busyPrompts: readonly BusyPrompt[] = ["refuse", "queue", "queue-past-cancel", "cancel"];

/** Runs `work` as the session's turn, `idle → running → idle`, one turn at a time; a prompt meanwhile as `busy` says. */
export async function runTurn(
  session: DemoSession,
  busy: BusyPrompt,
  start: (cancelled: AbortSignal) => Turn,
  work: (turn: Turn) => Promise<StopReason>,
): Promise<StopReason> {
  const cancelsAtSend = session.cancels;
  // Waiters wake in the order they came, so queued prompts run in the order they were sent.
  while (session.turn.name === "running") {
    if (busy === "refuse")
      throw RequestError.invalidRequest(
        { sessionId: session.id },
        "a prompt turn is already running in this session; cancel it or wait for it to end",
      );
    if (busy === "cancel") session.turn.cancel.abort();
    await session.turn.ended;
    // `session/cancel` cancels the queued prompts too, as agents that queue do.
    if (session.cancels !== cancelsAtSend && busy !== "queue-past-cancel") return "cancelled";
  }
  const cancel = new AbortController();
  let ended!: () => void;
  session.turn = { name: "running", cancel, ended: new Promise<void>((resolve) => (ended = resolve)) };
  try {
    const stopReason = await work(start(cancel.signal));
    return cancel.signal.aborted ? "cancelled" : stopReason;
  } finally {
    session.turn = { name: "idle" };
    // A queued prompt starts once this one's answer was sent (it is, before the next turn of the event loop), as an
    // agent answers a prompt before it starts the next: the client reads them in that order.
    setImmediate(ended);
  }
}

/** Splits by code point (never inside a surrogate pair) into at most `pieces` non-empty parts. */
export function splitText(text: string, pieces: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / Math.max(1, pieces)));
  const parts: string[] = [];
  for (let start = 0; start < chars.length; start += size) {
    parts.push(chars.slice(start, start + size).join(""));
  }
  return parts;
}
