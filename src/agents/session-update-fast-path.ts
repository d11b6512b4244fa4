import type { Readable } from "node:stream";
import { DEFAULT_MAX_MESSAGE_BYTES, type SessionNotification } from "@agentclientprotocol/sdk";
import { type MessageHead, messageHead, readMessageHead } from "./message-head.js";
import type { RequestId } from "./prompts-in-flight.js";
import { INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR } from "../protocol/json-rpc-codes.js";
import { TopLevelFieldReader } from "./top-level-fields.js";

const UPDATE_METHOD = '"session/update"';
const encoder = new TextEncoder();

export interface FastPathHandlers {
  /** A `session/update` notification, in the order the agent sent it, with its line as it came. */
  onUpdate(notification: SessionNotification, line: string): void;
  /**
   * A response passed on to the SDK, with the id it answers (it tells replay of `session/load` from live updates, and
   * which prompts the agent answered before the requests after it).
   */
  onResponse(id: RequestId): void;
  /** A request of the agent's passed on to the SDK, before the SDK dispatches it (in wire order with the responses). */
  onRequest(id: RequestId, method: string): void;
  /** A message refused here (too long, or not JSON but readable as a request or a response), with the reason. */
  onRefused(reason: string): void;
  /** An error answer to a request of the agent's refused here: one JSON-RPC line, to write to the agent's stdin. */
  answerAgent(line: string): void;
}

/**
 * Lines handled a turn, shared with every other agent's output (a `TurnBudget`): past it, this output's pipe is paused
 * (`pause`) and its lines wait for the next turn (`resume`: read again unless something else holds it).
 */
export interface OutputPacing {
  /** One line to handle now: false once this turn's share is spent. */
  take(): boolean;
  /** Runs `handle` on the next turn. */
  next(handle: () => void): void;
  pause(): void;
  resume(): void;
}

/**
 * The agent's stdout, with `session/update` notifications taken out and handed to `onUpdate`
 * as they arrive; every other line goes on to the ACP SDK unchanged.
 *
 * Why: a streaming agent sends thousands of updates a second, and the SDK's receive path (a
 * stream read, dispatch and a full schema validation per message) cost more than everything
 * Berth does with an update. Berth checks the envelope it relies on (a session id and an update
 * kind) and relays updates verbatim to clients, which validate them. Updates are therefore
 * handled a little earlier than the requests and responses around them, never out of order
 * among themselves. A line longer than the SDK's message limit is refused, not buffered (only its
 * top-level fields are read as it arrives, to answer it: see `refuse`); so is a line that is not
 * JSON but reads as a request or a response. The requests and responses passed on are told to
 * `onRequest` and `onResponse` in the order the agent wrote them, before the SDK handles any of
 * them (its dispatch does not keep that order with the answers' promise reactions).
 */
export function divertSessionUpdates(
  stdout: Readable,
  handlers: FastPathHandlers,
  /** The SDK's own limit on a line, in UTF-8 bytes: a line it would refuse is refused here, where it can be answered. */
  maxLineBytes = DEFAULT_MAX_MESSAGE_BYTES,
  /** None: every line is handled as it arrives. */
  pacing?: OutputPacing,
): ReadableStream<Uint8Array> {
  /** The start of the current line, in pieces: joined only once its newline arrives. */
  let pieces: string[] = [];
  /** The current line's UTF-8 bytes so far, counted on past the limit (for the refusal). */
  let pending = 0;
  /** Whether the current line's last piece so far ends in `\r`, which the SDK leaves out of a line's length (CRLF). */
  let endsInCarriageReturn = false;
  /** Once the current line is over the limit: the reader of its top-level fields, all that is kept of it. */
  let overLimit: TopLevelFieldReader | undefined;
  // The SDK cancels its side when the connection closes; output arriving after that is dropped.
  let open = true;
  /** What goes on to the SDK for the line that ends with `tail`; the line's state starts afresh. */
  const takeLine = (tail: string): string => {
    const length = pending + Buffer.byteLength(tail) - ((tail ? tail.endsWith("\r") : endsInCarriageReturn) ? 1 : 0);
    const reader = overLimit ?? (length > maxLineBytes ? readerOf(pieces) : undefined);
    reader?.feed(tail);
    reader?.end();
    const line = reader === undefined ? (pieces.length === 0 ? tail : pieces.join("") + tail) : "";
    pieces = [];
    pending = 0;
    endsInCarriageReturn = false;
    overLimit = undefined;
    if (reader !== undefined) return refuse(messageHead(reader.fields()), { problem: "too_large", size: length, limit: maxLineBytes }, handlers);
    if (line.includes(UPDATE_METHOD) && divert(line, handlers)) return "";
    return observe(line, handlers);
  };
  /** What was read and not yet handled (the first from `handledTo` on): only while this output waits for a turn. */
  const unhandled: string[] = [];
  let handledTo = 0;
  /** Paused for the budget: waiting for the next turn. */
  let waiting = false;
  /** The pipe ended (or failed) while lines waited: the stream closes once they are handled. */
  let finished: { readonly error?: unknown } | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      /** Handles what was read, line by line, until it is all handled or this turn's budget is spent. */
      const handle = (): void => {
        let rest = "";
        while (unhandled.length > 0) {
          const chunk = unhandled[0]!;
          for (let newline = chunk.indexOf("\n", handledTo); newline >= 0; newline = chunk.indexOf("\n", handledTo)) {
            if (pacing !== undefined && !pacing.take()) {
              if (rest && open) controller.enqueue(encoder.encode(rest));
              if (!waiting) pacing.pause();
              waiting = true;
              pacing.next(handle);
              return;
            }
            const from = handledTo;
            handledTo = newline + 1;
            rest += handled(chunk.slice(from, newline));
          }
          keepTail(chunk.slice(handledTo));
          unhandled.shift();
          handledTo = 0;
        }
        if (rest && open) controller.enqueue(encoder.encode(rest));
        if (waiting) {
          waiting = false;
          pacing?.resume();
        }
        if (finished) finish(finished);
      };
      /**
       * A line taken; a handler's exception goes on to the process (uncaught, as it would from the stream) once the
       * lines after it are handled: one line's failure must not stall this output, or the others behind it.
       */
      const handled = (line: string): string => {
        try {
          return takeLine(line);
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
          return "";
        }
      };
      /** The start of a line whose newline has not come yet. */
      const keepTail = (tail: string): void => {
        if (!tail) return;
        const bytes = Buffer.byteLength(tail);
        endsInCarriageReturn = tail.endsWith("\r");
        if (overLimit === undefined && pending + bytes - (endsInCarriageReturn ? 1 : 0) > maxLineBytes) {
          overLimit = readerOf(pieces);
          pieces = [];
        }
        if (overLimit === undefined) pieces.push(tail);
        else overLimit.feed(tail);
        pending += bytes;
      };
      const finish = ({ error }: { readonly error?: unknown }): void => {
        if (!open) return;
        open = false;
        if (error !== undefined) return controller.error(error);
        // The SDK reads a last line without its newline too: so is it read here, and refused if too long.
        const last = pieces.length > 0 || overLimit !== undefined ? handled("") : "";
        if (last) controller.enqueue(encoder.encode(last));
        controller.close();
      };
      stdout.setEncoding("utf8");
      stdout.on("data", (chunk: string) => {
        unhandled.push(chunk);
        // Read in the same turn as lines still waiting (the pipe was read before its pause): they go first.
        if (!waiting) handle();
      });
      // What was read before the pipe ended or failed is handled first (the SDK too gets every line read).
      stdout.on("end", () => {
        finished = {};
        if (!waiting) finish(finished);
      });
      stdout.on("error", (error) => {
        finished = { error };
        if (!waiting) finish(finished);
      });
    },
    cancel() {
      open = false;
    },
  });
}

/** A reader of a line's top-level fields that has read its start, `pieces`. */
function readerOf(pieces: readonly string[]): TopLevelFieldReader {
  const reader = new TopLevelFieldReader();
  for (const piece of pieces) reader.feed(piece);
  return reader;
}

/**
 * What is handed to the SDK for a request or a response (its line, or an error answer in place of a line that is not
 * JSON), after telling the handlers of it.
 */
function observe(line: string, handlers: FastPathHandlers): string {
  let message: { id?: unknown; method?: unknown };
  try {
    // Trimmed as the SDK trims (a BOM, a no-break space): a line it would read is not refused here.
    message = JSON.parse(line.trim()) as typeof message;
  } catch {
    return refuse(readMessageHead(line), { problem: "not_json", line }, handlers);
  }
  if (typeof message === "object" && message !== null && isRequestId(message.id)) {
    if (typeof message.method === "string") handlers.onRequest(message.id, message.method);
    else if (!("method" in message)) handlers.onResponse(message.id);
  }
  return `${line}\n`;
}

type Refusal =
  | { readonly problem: "too_large"; readonly size: number; readonly limit: number }
  | { readonly problem: "not_json"; readonly line: string };

/**
 * A line refused here, by what its top-level fields show. The answer to a request of Berth's becomes an error answer to
 * that request, handed to the SDK in its place, so the request fails instead of waiting for ever; a request of the
 * agent's is answered with an error, so the agent does not wait either. Anything else too long is dropped; anything
 * else that is not JSON goes on to the SDK, which answers the agent with a parse error (id null), as it always did.
 */
function refuse(message: MessageHead, refusal: Refusal, handlers: FastPathHandlers): string {
  const what = refusal.problem === "too_large" ? `${refusal.size} bytes long, more than the limit of ${refusal.limit}` : "not valid JSON";
  switch (message.kind) {
    case "response": {
      handlers.onRefused(`the answer to request ${message.id} is ${what}: the request fails`);
      handlers.onResponse(message.id);
      const data =
        refusal.problem === "too_large"
          ? { code: "agent_answer_too_large", size: refusal.size, limit: refusal.limit }
          : { code: "agent_answer_not_json" };
      const error = { code: INTERNAL_ERROR, message: `Internal error: the agent's answer is ${what}; Berth refused it`, data };
      return `${JSON.stringify({ jsonrpc: "2.0", id: message.id, error })}\n`;
    }
    case "request": {
      handlers.onRefused(`request ${message.id} (${message.method ?? "its method unreadable"}) is ${what}: answered with an error`);
      const error =
        refusal.problem === "too_large"
          ? {
              code: INVALID_REQUEST,
              message: `Invalid request: the message is ${what}`,
              data: { size: refusal.size, limit: refusal.limit },
            }
          : { code: PARSE_ERROR, message: "Parse error: the message is not valid JSON" };
      handlers.answerAgent(`${JSON.stringify({ jsonrpc: "2.0", id: message.id, error })}\n`);
      return "";
    }
    case "unknown":
      if (refusal.problem === "not_json") return `${refusal.line}\n`;
      handlers.onRefused(`a message ${what}`);
      return "";
  }
}

/** The id of a request or of the response to one; null (an unreadable request) matches no request of Berth's. */
function isRequestId(id: unknown): id is string | number {
  return typeof id === "string" || typeof id === "number";
}

/** True if the line was a `session/update` notification (handled or refused here). */
function divert(line: string, handlers: FastPathHandlers): boolean {
  let message: { method?: unknown; id?: unknown; params?: { sessionId?: unknown; update?: { sessionUpdate?: unknown } } };
  try {
    message = JSON.parse(line) as typeof message;
  } catch {
    return false; // not JSON: the SDK reports it
  }
  if (message?.method !== "session/update" || "id" in message) return false;
  const params = message.params;
  if (typeof params?.sessionId !== "string" || typeof params.update?.sessionUpdate !== "string") {
    handlers.onRefused("session/update without a sessionId and an update kind");
    return true;
  }
  handlers.onUpdate(params as SessionNotification, line);
  return true;
}
