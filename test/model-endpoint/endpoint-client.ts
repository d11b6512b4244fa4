import { afterEach, expect } from "vitest";
import type { ModelScript } from "../support/model-endpoint/script.js";
import { startModelEndpoint, type ModelEndpoint } from "../support/model-endpoint/server.js";

/** What the endpoint tests share: starting endpoints, reading their streams as a client does. */

/** Starts scripted endpoints for a test file and closes them after each test. */
export function endpointStarter(): (script: ModelScript) => Promise<ModelEndpoint> {
  const endpoints: ModelEndpoint[] = [];
  afterEach(async () => {
    await Promise.all(endpoints.splice(0).map((e) => e.close()));
  });
  return async (script) => {
    const endpoint = await startModelEndpoint(script);
    endpoints.push(endpoint);
    return endpoint;
  };
}

/** One server-sent event: its `event:` name (empty when unnamed) and its `data:` text. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/** Reads an SSE body event by event, calling `onEvent` with each as it arrives. */
export async function readServerSentEvents(
  response: Response,
  onEvent: (event: ServerSentEvent) => void = () => undefined,
): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        lines
          .filter((line) => line.startsWith(`${name}: `))
          .map((line) => line.slice(name.length + 2))
          .join("\n");
      const event = { event: field("event"), data: field("data") };
      events.push(event);
      onEvent(event);
    }
  }
}

/** An event as the Anthropic and Responses APIs send them: named, with a JSON object whose `type` is the name. */
export interface NamedEvent {
  event: string;
  data: { type: string } & Record<string, unknown>;
}

export async function readNamedEvents(response: Response, onEvent: (event: NamedEvent) => void = () => undefined): Promise<NamedEvent[]> {
  const named = (event: ServerSentEvent): NamedEvent => ({ event: event.event, data: JSON.parse(event.data) as NamedEvent["data"] });
  return (await readServerSentEvents(response, (event) => onEvent(named(event)))).map(named);
}

/**
 * A client that goes away while a response is held: `send` streams a request whose script holds
 * after the text "waiting"; the client aborts when that text arrives, then the hold opens. The
 * endpoint must still answer and have recorded no error.
 */
export async function goAwayDuringHold(
  endpoint: ModelEndpoint,
  send: (signal: AbortSignal) => Promise<Response>,
  openHold: () => void,
): Promise<void> {
  const abort = new AbortController();
  const reading = readServerSentEvents(await send(abort.signal), (event) => {
    if (event.data.includes("waiting")) abort.abort();
  });
  await expect(reading).rejects.toThrow();
  openHold();
  expect((await fetch(`${endpoint.url}/`)).status).toBe(200);
  expect(endpoint.errors).toEqual([]);
}
