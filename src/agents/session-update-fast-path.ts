import type { Readable } from "node:stream";
import { DEFAULT_MAX_MESSAGE_BYTES, type SessionNotification } from "@agentclientprotocol/sdk";
import type { RequestId } from "./prompts-in-flight.js";

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
  /** A message refused here, with the reason. */
  onRefused(reason: string): void;
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
 * among themselves. A line longer than the SDK's message limit is refused, not buffered. The
 * requests and responses passed on are told to `onRequest` and `onResponse` in the order the
 * agent wrote them, before the SDK handles any of them (its dispatch does not keep that order
 * with the answers' promise reactions).
 */
export function divertSessionUpdates(
  stdout: Readable,
  handlers: FastPathHandlers,
  maxLineLength = DEFAULT_MAX_MESSAGE_BYTES,
): ReadableStream<Uint8Array> {
  /** The start of the current line, in pieces: joined only once its newline arrives. */
  let pieces: string[] = [];
  let pending = 0;
  let oversized = false;
  // The SDK cancels its side when the connection closes; output arriving after that is dropped.
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stdout.setEncoding("utf8");
      stdout.on("data", (chunk: string) => {
        let rest = "";
        let from = 0;
        for (let newline = chunk.indexOf("\n"); newline >= 0; newline = chunk.indexOf("\n", from)) {
          const tail = chunk.slice(from, newline);
          from = newline + 1;
          const line = pieces.length === 0 ? tail : pieces.join("") + tail;
          const refused = oversized || pending + tail.length > maxLineLength;
          pieces = [];
          pending = 0;
          oversized = false;
          if (refused) {
            handlers.onRefused(`a message longer than ${maxLineLength} characters`);
            continue;
          }
          if (line.includes(UPDATE_METHOD) && divert(line, handlers)) continue;
          observe(line, handlers);
          rest += `${line}\n`;
        }
        const tail = chunk.slice(from);
        if (tail && !oversized) {
          pending += tail.length;
          if (pending > maxLineLength) {
            oversized = true;
            pieces = [];
          } else {
            pieces.push(tail);
          }
        }
        if (rest && open) controller.enqueue(encoder.encode(rest));
      });
      stdout.on("end", () => {
        if (!open) return;
        open = false;
        if (pieces.length > 0) controller.enqueue(encoder.encode(pieces.join("")));
        controller.close();
      });
      stdout.on("error", (error) => {
        if (!open) return;
        open = false;
        controller.error(error);
      });
    },
    cancel() {
      open = false;
    },
  });
}

/** Tells the handlers of a request or a response on its way to the SDK (few next to the updates: parsed here too). */
function observe(line: string, handlers: FastPathHandlers): void {
  let message: { id?: unknown; method?: unknown };
  try {
    message = JSON.parse(line) as typeof message;
  } catch {
    return; // not JSON: the SDK reports it
  }
  if (typeof message !== "object" || message === null || !isRequestId(message.id)) return;
  if (typeof message.method === "string") handlers.onRequest(message.id, message.method);
  else if (!("method" in message)) handlers.onResponse(message.id);
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
