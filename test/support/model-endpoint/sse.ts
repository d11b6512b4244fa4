import type { ServerResponse } from "node:http";

/** Server-sent events, as the model APIs stream them. */

export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
}

/** One event: `event:` line when named (Anthropic, Responses), then `data:` (JSON, or a literal such as `[DONE]`). */
export function sendEvent(res: ServerResponse, data: unknown, event?: string): void {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  res.write(`${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`);
}

/** Waits for `hold` unless the client goes away first (an agent cancelling its request); true when the response may go on. */
export async function waitForHold(res: ServerResponse, hold: Promise<void> | undefined): Promise<boolean> {
  if (!hold) return !res.destroyed;
  if (res.destroyed) return false;
  let onClose!: () => void;
  const closed = new Promise<false>((resolve) => {
    onClose = () => resolve(false);
    res.once("close", onClose);
  });
  const result = await Promise.race([hold.then(() => true), closed]);
  res.off("close", onClose);
  return result && !res.destroyed;
}

/** Ends a JSON (non-streaming) response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
