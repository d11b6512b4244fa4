/** One server-sent event as the Anthropic and Responses APIs name them: `event:` line and JSON `data:`. */
export interface NamedEvent {
  event: string;
  data: { type: string } & Record<string, unknown>;
}

/** Reads an SSE body event by event, calling `onEvent` with each event as it arrives. */
export async function readNamedEvents(response: Response, onEvent: (event: NamedEvent) => void = () => undefined): Promise<NamedEvent[]> {
  const events: NamedEvent[] = [];
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
      const event = { event: field("event"), data: JSON.parse(field("data")) as NamedEvent["data"] };
      events.push(event);
      onEvent(event);
    }
  }
}
