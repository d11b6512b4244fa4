import { describe, expect, it } from "vitest";
import { type SseEvent, SseReader } from "../../src/protocol/sse-events.js";

/** Streams and the events each carries, as the HTML standard reads them. */
const table: { name: string; stream: string; events: SseEvent[] }[] = [
  { name: "one event", stream: 'event: progress\ndata: {"line":"a"}\n\n', events: [{ event: "progress", data: '{"line":"a"}' }] },
  {
    name: "data over several lines, joined by \\n",
    stream: "event: failed\ndata: first\ndata: second\n\n",
    events: [{ event: "failed", data: "first\nsecond" }],
  },
  { name: "\\r\\n line ends", stream: "event: done\r\ndata: x\r\n\r\n", events: [{ event: "done", data: "x" }] },
  { name: "\\r line ends", stream: "event: done\rdata: x\r\r", events: [{ event: "done", data: "x" }] },
  { name: "no space after the colon, one space removed", stream: "event:done\ndata:  two\n\n", events: [{ event: "done", data: " two" }] },
  { name: "comments and unknown fields skipped", stream: ": keepalive\nid: 7\nretry: 10\ndata: x\n\n", events: [{ event: "message", data: "x" }] },
  { name: "a field with no colon is empty data", stream: "data\n\n", events: [{ event: "message", data: "" }] },
  { name: "no data: nothing dispatched, the type forgotten", stream: "event: lost\n\ndata: y\n\n", events: [{ event: "message", data: "y" }] },
  { name: "a byte order mark first", stream: "\uFEFFdata: z\n\n", events: [{ event: "message", data: "z" }] },
  { name: "an unfinished event is not dispatched", stream: "data: a\n\ndata: b\n", events: [{ event: "message", data: "a" }] },
  {
    name: "several events",
    stream: "event: progress\ndata: 1\n\nevent: progress\ndata: 2\n\nevent: done\ndata: 3\n\n",
    events: [
      { event: "progress", data: "1" },
      { event: "progress", data: "2" },
      { event: "done", data: "3" },
    ],
  },
];

describe("SseReader: Server-Sent Events for the CLI and the dashboard", () => {
  it.each(table)("$name, in one chunk", ({ stream, events }) => {
    expect(new SseReader().push(stream)).toEqual(events);
  });

  it.each(table)("$name, split at every place", ({ stream, events }) => {
    for (let at = 0; at <= stream.length; at++) {
      const reader = new SseReader();
      expect([...reader.push(stream.slice(0, at)), ...reader.push(stream.slice(at))], `split at ${at}`).toEqual(events);
    }
  });

  it.each(table)("$name, a character at a time", ({ stream, events }) => {
    const reader = new SseReader();
    expect([...stream].flatMap((character) => reader.push(character))).toEqual(events);
  });
});
