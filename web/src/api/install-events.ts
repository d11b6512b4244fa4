import { SseReader } from "../../../src/protocol/sse-events.js";
import { authHeaders } from "../auth/token.js";
import { ApiError } from "./rest.js";
import type { InstallEvent } from "./types.js";

/**
 * Follows an install's Server-Sent Events (`GET /api/agents/installs/<id>/events`) with `fetch`, which sends the
 * page's credential in a header as every REST call does (an EventSource could not). Resolves with the end event.
 */
export async function followInstall(installId: string, onEvent: (event: InstallEvent) => void): Promise<InstallEvent> {
  const response = await fetch(`api/agents/installs/${encodeURIComponent(installId)}/events`, { headers: authHeaders() });
  if (!response.ok || !response.body)
    throw new ApiError(response.status, `http_${response.status}`, `following the install failed with HTTP ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const events = new SseReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("Berth ended the install's events before its end (did it stop?)");
    for (const { event: kind, data } of events.push(value)) {
      const event = { kind, ...(JSON.parse(data) as object) } as InstallEvent;
      onEvent(event);
      if (event.kind !== "progress") {
        void reader.cancel();
        return event;
      }
    }
  }
}
