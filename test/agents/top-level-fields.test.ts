import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EnvelopeFields, TopLevelFieldReader } from "../../src/agents/top-level-fields.js";

/** What the reader gives for `pieces`, fed one after the other. */
function read(...pieces: string[]): EnvelopeFields {
  const reader = new TopLevelFieldReader();
  for (const piece of pieces) reader.feed(piece);
  return reader.fields();
}

/** The same fields, read by `JSON.parse` from a whole object's text. */
function parsedFields(text: string): EnvelopeFields {
  const message = JSON.parse(text) as Record<string, unknown>;
  const { id, method } = message;
  return {
    id: typeof id === "string" || typeof id === "number" ? id : undefined,
    method: typeof method === "string" ? method : undefined,
    hasMethod: "method" in message,
    hasResult: "result" in message,
    hasError: "error" in message,
  };
}

const none: EnvelopeFields = { id: undefined, method: undefined, hasMethod: false, hasResult: false, hasError: false };
const response = (id: string | number): EnvelopeFields => ({ ...none, id, hasResult: true });
const request = (id: string | number, method: string): EnvelopeFields => ({ ...none, id, method, hasMethod: true });

/** `text` cut into pieces at each of `cuts` (any numbers: taken modulo its length). */
function cutAt(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  return [...at, text.length].map((end, i) => text.slice(i === 0 ? 0 : at[i - 1], end));
}

describe("reading the top-level fields of a JSON object fed piece by piece", () => {
  it("finds an id that comes after a result of megabytes, fed in small pieces", () => {
    const result = JSON.stringify({ content: [{ text: "x".repeat(3_000_000), nested: [[[{ a: "]]}}" }]]] }] });
    const text = `{"jsonrpc":"2.0","result":${result},"id":7}`;
    const pieces = cutAt(
      text,
      Array.from({ length: 300 }, (_, i) => i * 10_007),
    );
    expect(read(...pieces)).toEqual(response(7));
  });

  it("finds a request's id and method after long params", () => {
    const params = JSON.stringify({ sessionId: "s", path: "/a", content: 'y\\"{'.repeat(500_000) });
    expect(read(`{"jsonrpc":"2.0","params":${params},"method":"fs/write_text_file","id":"r-1"}`)).toEqual(request("r-1", "fs/write_text_file"));
  });

  it("takes nothing inside a nested value or a string for a top-level field: braces, quotes, escapes and keys there are skipped", () => {
    const tricky = [
      '{"result":{"text":"}]{[\\\\"},"id":-2.5e1,"x":1}',
      '{"result":{"a":"\\"id\\":1,\\"method\\":\\"m\\"","id":2,"method":"n"},"id":3}',
      '{"result":["\\\\\\"", {"id":4}, "}", "]"], "id" : 5 }',
      '{"note":"\\"id\\":6,\\"error\\":{}","result":{},"id":7}',
      '{"note":"{\\"method\\":\\"x\\"}","error":[{"id":8}],"id":9}',
    ];
    for (const text of tricky) expect(read(text), text).toEqual(parsedFields(text));
    expect(read(tricky[2] ?? "")).toEqual(response(5));
    expect(read(tricky[3] ?? "")).toEqual(response(7));
  });

  it("counts what it read up to where the text is cut or stops being JSON, and nothing it cannot be sure of", () => {
    expect(read('{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"x":"aaa')).toEqual(response(3));
    expect(read('{"jsonrpc":"2.0","id":7,"result":{"stopReason":end_turn}},"x":tru')).toEqual(response(7));
    expect(read('{"id":1,"method":"x","result":{}}')).toEqual({ ...request(1, "x"), hasResult: true });
    // Cut in the middle of a top-level scalar: 12 may be 123, "ab may be "abc".
    expect(read('{"result":{},"id":12')).toEqual({ ...none, hasResult: true });
    expect(read('{"result":{},"id":"ab')).toEqual({ ...none, hasResult: true });
    expect(read('{"method":"fs/rea')).toEqual(none);
    expect(read('{"id":12', "3,", '"result":nul')).toEqual({ ...none, id: 123 });
    // Where the text is known to end (its line did), a number there is whole.
    const ended = new TopLevelFieldReader();
    ended.feed('{"result":{},"id":1');
    ended.feed("2");
    ended.end();
    expect(ended.fields()).toEqual(response(12));
    // A repeated key: the last wins, as for JSON.parse.
    expect(read('{"id":1,"result":{},"id":{"x":1}}')).toEqual({ ...none, hasResult: true });
    for (const text of [
      "",
      "not json",
      "[]",
      '{"id":1,"result":{}', // cut, but whole up to there
      '{"id" 1,"result":{}}',
      '{"id":01,"result":{}}',
      '{"id":1 "result":{}}',
      '{"x":1;"id":1,"result":{}}', // only a comma goes on to the next field
      '{"x":tru,"id":1,"result":{}}',
      '{"x":"a\\qb","id":1,"result":{}}', // a bad escape
      '{"bad\\q":1,"id":1,"result":{}}',
      '{"x":"a\tb","id":1,"result":{}}', // a raw control character in a string
      '{"x":1}{"id":1,"result":{}}', // nothing is read after the object
      '{"x":"',
    ]) {
      const fields = read(text);
      expect(fields.hasResult && fields.id !== undefined, text).toBe(text === '{"id":1,"result":{}');
    }
  });

  it("keeps no key or scalar longer than its bound, and reads on past it", () => {
    const long = "z".repeat(10_000);
    expect(read(`{"id":"${long}","result":{}}`)).toEqual({ ...none, hasResult: true });
    expect(read(`{"${long}":1,"id":"a","result":{}}`)).toEqual(response("a"));
    expect(read(`{"x":1${"0".repeat(10_000)},"id":"a","result":{}}`)).toEqual(response("a"));
    expect(read(`{"x":t${"r".repeat(10_000)}e,"id":"a","result":{}}`)).toEqual(none);
  });

  it("reads a string split anywhere, even between the halves of a surrogate pair or inside an escape", () => {
    const text = '{"method":"fs/\\u00e9😀\\"x","id":"\\\\é"}';
    for (let cut = 0; cut <= text.length; cut++) {
      expect(read(text.slice(0, cut), text.slice(cut)), `cut at ${cut}`).toEqual(request("\\é", 'fs/é😀"x'));
    }
  });

  it("reads no length of string or depth of nesting into a stack overflow", () => {
    expect(read(`{"jsonrpc":"2.0","result":"${"x".repeat(9_000_000)}","id":3}`)).toEqual(response(3));
    expect(read(`{"jsonrpc":"2.0","id":3,"result":"${"x".repeat(9_000_000)}`)).toEqual({ ...none, id: 3 });
    expect(read(`{"result":${"[".repeat(1_000_000)}${"]".repeat(1_000_000)},"id":3}`)).toEqual(response(3));
  });
});

const key = fc.oneof(fc.constantFrom("id", "method", "result", "error", "jsonrpc", "params"), fc.string({ unit: "binary", maxLength: 8 }));
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer(),
  fc.double(),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom("}", "]", '"', "\\", '"id":1', "{"),
  fc.object({ maxDepth: 2 }),
);
const whitespace = fc.constantFrom("", "", " ", "\t", " \r\n ");
type Member = [name: string, value: unknown, before: string, after: string];
const member = fc.tuple(key, value, whitespace, whitespace);
/** A JSON object's text, with whitespace between its tokens. */
const textOf = (members: Member[]) =>
  `{${members.map(([name, v, before, after]) => `${before}${JSON.stringify(name)}${after}:${before}${JSON.stringify(v)}${after}`).join(",")}}`;
/** Its members in any order; a key may repeat. */
const objectText = fc.array(member, { maxLength: 8 }).map(textOf);
/** Its members in any order, each key once. */
const distinctKeysText = fc.uniqueArray(member, { maxLength: 8, selector: ([name]) => name }).map(textOf);

describe("the reader agrees with JSON.parse", () => {
  it("on any JSON object split at any points", () => {
    fc.assert(
      fc.property(objectText, fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) => {
        expect(read(...cutAt(text, cuts))).toEqual(parsedFields(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("on any start of one with keys that do not repeat: what it reads there is what the whole says", () => {
    fc.assert(
      fc.property(distinctKeysText, fc.nat(), fc.array(fc.nat(), { maxLength: 4 }), (text, end, cuts) => {
        const start = text.slice(0, end % (text.length + 1));
        const fields = read(...cutAt(start, cuts));
        const whole = parsedFields(text);
        if (fields.id !== undefined) expect(fields.id).toEqual(whole.id);
        if (fields.method !== undefined) expect(fields.method).toBe(whole.method);
        for (const has of ["hasMethod", "hasResult", "hasError"] as const) if (fields[has]) expect(whole[has]).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
