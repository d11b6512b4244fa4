// The follower's frame splitter (src/server/sse-frames.ts): however a stream is cut into chunks, the same frames come out
// as splitting the whole text at its blank lines; an unfinished frame past the cap throws.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseFrames } from "../../src/server/sse-frames.js";

const bytes = (text: string) => Buffer.byteLength(text);

describe("SseFrames", () => {
  it("gives the frames of the whole text, however it is cut into chunks", () => {
    const piece = fc.constantFrom("\n", "\n\n", "event: x", "data: {}", ": keep-alive", "é", "");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 10 }), (pieces, cuts) => {
        const text = pieces.join("");
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((from, i) => text.slice(from, [...points, text.length][i]));
        const frames = new SseFrames(1024);
        const out = chunks.flatMap((chunk) => frames.push(chunk, bytes(chunk)));
        expect(out).toEqual(text.split("\n\n").slice(0, -1));
      }),
      { numRuns: 500 },
    );
  });

  it("throws once an unfinished frame is larger than the cap, counted in bytes", () => {
    const frames = new SseFrames(10);
    expect(frames.push("data: a\n\ndata: ", bytes("data: a\n\ndata: "))).toEqual(["data: a"]);
    expect(frames.push("éé", 4)).toEqual([]);
    expect(() => frames.push("x", 1)).toThrow("a frame of more than 10 bytes");
  });

  it("reads a frame of 16 MiB cut into 64 KiB chunks", () => {
    const frames = new SseFrames(32 * 1024 * 1024);
    const chunk = "x".repeat(64 * 1024);
    for (let i = 0; i < 256; i++) expect(frames.push(chunk, chunk.length)).toEqual([]);
    const [frame] = frames.push("\n\n", 2);
    expect(frame).toHaveLength(16 * 1024 * 1024);
  });
});
