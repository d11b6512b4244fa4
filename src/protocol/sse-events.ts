// Server-Sent Events as the HTML standard reads them ("Interpreting an event stream"), for the CLI and the
// dashboard alike: both follow an install's events with fetch, which sends the credential in a header.
// No Node or browser API here: the dashboard's bundle imports this module too.

/** One dispatched event: its type (`message` when the stream named none) and its data lines joined by `\n`. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Reads a stream's text as it arrives, chunk by chunk; a line or an event may be split anywhere between chunks. */
export class SseReader {
  private pending = "";
  private started = false;
  /** The last chunk ended in `\r`: a `\n` first in the next one is the same line end. */
  private afterCr = false;
  private type = "";
  private data: string[] = [];

  /** The events `chunk` completed. */
  push(chunk: string): SseEvent[] {
    let text = this.pending + (this.afterCr && chunk.startsWith("\n") ? chunk.slice(1) : chunk);
    if (chunk !== "") this.afterCr = false;
    if (!this.started && text !== "") {
      this.started = true;
      if (text.startsWith("\uFEFF")) text = text.slice(1);
    }
    const events: SseEvent[] = [];
    let start = 0;
    for (let end = nextLineEnd(text, start); end !== -1; end = nextLineEnd(text, start)) {
      // A `\r` last in the chunk may be the first half of `\r\n`: its `\n` is skipped if it comes.
      if (text[end] === "\r" && end === text.length - 1) this.afterCr = true;
      const event = this.line(text.slice(start, end));
      if (event) events.push(event);
      start = end + (text[end] === "\r" && text[end + 1] === "\n" ? 2 : 1);
    }
    this.pending = text.slice(start);
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const { type, data } = this;
    this.type = "";
    this.data = [];
    if (data.length === 0) return undefined;
    return { event: type || "message", data: data.join("\n") };
  }
}

function nextLineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) if (text[i] === "\n" || text[i] === "\r") return i;
  return -1;
}
