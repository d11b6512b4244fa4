import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TerminalOutput } from "../../src/location/terminal-output.js";

const utf8 = (text: string): Buffer => Buffer.from(text, "utf8");

/** The reference: the longest run of whole characters at the end of `text` that fits in `limit` bytes. */
function lastCharactersWithin(text: string, limit: number): string {
  const characters = [...text];
  let kept = "";
  for (let i = characters.length - 1; i >= 0; i--) {
    const next = characters[i]! + kept;
    if (Buffer.byteLength(next) > limit) break;
    kept = next;
  }
  return kept;
}

/** Splits `bytes` at the given cut points, which may fall inside a character. */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.subarray(from, point));
    from = point;
  }
  return chunks;
}

describe("TerminalOutput", () => {
  it("keeps everything under the limit, untruncated", () => {
    const output = new TerminalOutput(100);
    output.append(utf8("hello "));
    output.append(utf8("wörld"));
    expect(output.snapshot(true)).toEqual({ output: "hello wörld", truncated: false });
  });

  it("truncates from the beginning without splitting a multi-byte character at the cut", () => {
    // "ab" then three 3-byte euro signs: 11 bytes; the last 8 start inside the first euro sign.
    const output = new TerminalOutput(8);
    output.append(utf8("ab€€€"));
    expect(output.snapshot(true)).toEqual({ output: "€€", truncated: true });
  });

  it("cuts at a character boundary when the limit falls inside a 4-byte character", () => {
    const output = new TerminalOutput(6);
    output.append(utf8("x😀"));
    output.append(utf8("😀"));
    // 9 bytes; the last 6 are 2 bytes of the first emoji and the whole second one.
    expect(output.snapshot(true)).toEqual({ output: "😀", truncated: true });
  });

  it("holds back a character whose bytes have not all arrived while the command runs", () => {
    const output = new TerminalOutput(100);
    const euro = utf8("€");
    output.append(Buffer.concat([utf8("price "), euro.subarray(0, 2)]));
    expect(output.snapshot(false)).toEqual({ output: "price ", truncated: false });
    output.append(euro.subarray(2));
    expect(output.snapshot(false)).toEqual({ output: "price €", truncated: false });
  });

  it("hands its bytes over from the first whole character, with a character still arriving kept for the next piece", () => {
    const output = new TerminalOutput(7);
    const euro = utf8("€");
    // "ab€€" then two bytes of a third euro sign, 10 bytes: the last 7 start inside the first euro sign.
    output.append(Buffer.concat([utf8("ab€€"), euro.subarray(0, 2)]));
    const bytes = output.bytes();
    expect(bytes.toString("utf8", 0, 3)).toBe("€");
    // A terminal decodes the split character once its last byte follows.
    expect(Buffer.concat([bytes, euro.subarray(2)]).toString("utf8")).toBe("€€");
  });

  it("keeps nothing with a zero limit but says it truncated", () => {
    const output = new TerminalOutput(0);
    expect(output.snapshot(true)).toEqual({ output: "", truncated: false });
    output.append(utf8("x"));
    expect(output.snapshot(true)).toEqual({ output: "", truncated: true });
  });

  it("rejects a limit that is not a non-negative integer, naming it", () => {
    expect(() => new TerminalOutput(-1)).toThrow("outputByteLimit must be a non-negative integer, got -1");
    expect(() => new TerminalOutput(1.5)).toThrow("got 1.5");
  });

  it("always returns the longest whole-character suffix within the limit, however the bytes arrive", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), fc.array(fc.nat(), { maxLength: 12 }), fc.nat({ max: 80 }), (text, cuts, limit) => {
        const bytes = utf8(text);
        const output = new TerminalOutput(limit);
        for (const chunk of chunked(bytes, cuts)) output.append(chunk);
        const snapshot = output.snapshot(true);
        expect(snapshot.truncated).toBe(bytes.length > limit);
        expect(snapshot.output).toBe(lastCharactersWithin(text, limit));
        expect(Buffer.byteLength(snapshot.output)).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 2_000 },
    );
  });
});
