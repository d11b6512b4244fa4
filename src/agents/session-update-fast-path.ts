import type { Readable } from "node:stream";
import type { SessionNotification } from "@agentclientprotocol/sdk";

const UPDATE_METHOD = '"session/update"';
const encoder = new TextEncoder();

/**
 * The agent's stdout, with `session/update` notifications taken out and handed to `onUpdate`
 * as they arrive; every other line goes on to the ACP SDK unchanged.
 *
 * Why: a streaming agent sends thousands of updates a second, and the SDK's receive path (a
 * stream read, dispatch and a full schema validation per message) cost more than everything
 * Berth does with an update. Berth checks the envelope it relies on (a session id and an update
 * kind) and relays updates verbatim to clients, which validate them. Updates are therefore
 * handled a little earlier than the requests and responses around them, never out of order
 * among themselves.
 */
export function divertSessionUpdates(
  stdout: Readable,
  onUpdate: (notification: SessionNotification) => void,
  onRefused: (reason: string) => void,
): ReadableStream<Uint8Array> {
  let partial = "";
  // The SDK cancels its side when the connection closes; output arriving after that is dropped.
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stdout.setEncoding("utf8");
      stdout.on("data", (chunk: string) => {
        const lines = (partial + chunk).split("\n");
        partial = lines.pop() ?? "";
        let rest = "";
        for (const line of lines) {
          if (line.includes(UPDATE_METHOD) && divert(line, onUpdate, onRefused)) continue;
          rest += `${line}\n`;
        }
        if (rest && open) controller.enqueue(encoder.encode(rest));
      });
      stdout.on("end", () => {
        if (!open) return;
        open = false;
        if (partial) controller.enqueue(encoder.encode(partial));
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

/** True if the line was a `session/update` notification (handled or refused here). */
function divert(line: string, onUpdate: (notification: SessionNotification) => void, onRefused: (reason: string) => void): boolean {
  let message: { method?: unknown; id?: unknown; params?: { sessionId?: unknown; update?: { sessionUpdate?: unknown } } };
  try {
    message = JSON.parse(line) as typeof message;
  } catch {
    return false; // not JSON: the SDK reports it
  }
  if (message?.method !== "session/update" || "id" in message) return false;
  const params = message.params;
  if (typeof params?.sessionId !== "string" || typeof params.update?.sessionUpdate !== "string") {
    onRefused("session/update without a sessionId and an update kind");
    return true;
  }
  onUpdate(params as SessionNotification);
  return true;
}
