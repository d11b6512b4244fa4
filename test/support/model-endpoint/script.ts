import type { ServerResponse } from "node:http";

/**
 * What a test scripts for the model endpoint (server.ts): the model's replies, turn by turn, and a
 * normalized view of what the agent sent, whatever its wire format (openai-chat.ts,
 * anthropic-messages.ts, openai-responses.ts).
 */

export interface ToolCallStep {
  name: string;
  input: Record<string, unknown>;
}

/** One model response: optional text, then optional tool calls (ending the response with a tool-use stop). */
export interface ModelTurn {
  text?: string;
  toolCalls?: ToolCallStep[];
  /**
   * Resolves when the response may finish (to hold a turn open): `text` streams first, then the
   * response waits here with its stream open, then `after` and the tool calls follow.
   */
  hold?: Promise<void>;
  /** Text streamed after `hold` resolved (the "remaining output" of a held turn). */
  after?: string;
}

type WireFormatName = "openai-chat" | "anthropic-messages" | "openai-responses" | "gemini-generate-content";

/** A normalized view of what the agent sent, whatever the wire format. */
export interface ModelRequest {
  path: string;
  format: WireFormatName;
  model: string;
  hasTools: boolean;
  stream: boolean;
  /** The text of the last user message (the prompt, or the user turn the agent built). */
  lastUserText: string;
  /** Every tool result in the conversation the agent sent, oldest first. */
  toolResults: { callId: string; output: string }[];
  raw: unknown;
}

/** Chooses the reply to each request (`index` counts every routed request, from 0). Throwing answers HTTP 400. */
export type ModelScript = (request: ModelRequest, index: number) => ModelTurn;

/** One wire format: how its requests read and how a turn is written back. */
export interface WireFormat {
  /** Throws (a message naming what is wrong) when the body is not a request of this format. */
  parse(body: unknown, path: string): ModelRequest;
  /** Writes the turn: SSE when `request.stream`, one JSON body otherwise. Resolves when the response ended (or the client went away). */
  respond(turn: ModelTurn, request: ModelRequest, res: ServerResponse): Promise<void>;
}

/** The text an auxiliary request (title generation and the like: no tools offered) is answered with. */
export const auxiliaryReply = "Title";

/**
 * Plays `turns` in order for the requests that offer tools (the agent's real turns) and answers
 * the auxiliary ones (no tools: title generation, summaries) with a short text. A request beyond
 * the last turn throws (the endpoint answers 400 and records the error), so a test sees it.
 */
export function scriptedTurns(turns: ModelTurn[]): ModelScript {
  let next = 0;
  return (request) => {
    if (!request.hasTools) return { text: auxiliaryReply };
    const turn = turns[next];
    if (!turn) throw new Error(`the script has ${turns.length} turn(s); request ${next + 1} with tools has none`);
    next += 1;
    return turn;
  };
}

/** A hold released by the test: `turn.hold = gate.opened`, later `gate.open()`. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
