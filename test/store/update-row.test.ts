import { describe, expect, it } from "vitest";
import { updateRow } from "../../src/store/update-row.js";

/** What the row must read as: the notification's `{ update, _meta? }`, as the host takes it from the parsed line. */
function expected(line: string): unknown {
  const params = (JSON.parse(line) as { params: { update: unknown; _meta?: unknown } }).params;
  return params._meta ? { update: params.update, _meta: params._meta } : { update: params.update };
}

/** The row is valid JSON equal to the notification's update (and `_meta`), and nothing of the envelope. */
function expectRowOf(line: string): string {
  const row = updateRow(line);
  expect(JSON.parse(row), line).toEqual(expected(line));
  return row;
}

const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } };

describe("updateRow: an agent's session/update line as its journal row", () => {
  it("keeps the update's own text, without the envelope", () => {
    const line = JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "agent-1", update } });
    expect(expectRowOf(line)).toBe(`{"update":${JSON.stringify(update)}}`);
  });

  it("reads any whitespace and key order, a CRLF line, and values of every kind around the update", () => {
    const lines = [
      ` { "params" : { "update" : { "sessionUpdate" : "agent_message_chunk" , "content" : { "type":"text","text":"a b" } } , "sessionId":"s" } , "method":"session/update" , "jsonrpc":"2.0" } `,
      `{"method":"session/update","params":{"update":{"sessionUpdate":"plan","entries":[]},"sessionId":"s"},"jsonrpc":"2.0"}\r`,
      `{\n\t"jsonrpc": "2.0",\n\t"method": "session/update",\n\t"params": {\n\t\t"sessionId": "s",\n\t\t"update": {"sessionUpdate": "tool_call", "n": [1, -2.5e3, true, false, null, {"a": [[]]}]}\n\t}\n}`,
      `{"jsonrpc":"2.0","extra":[1,{"x":"}"}],"method":"session/update","params":{"sessionId":"s","other":{"update":1},"update":{"sessionUpdate":"x"},"n":0}}`,
    ];
    for (const line of lines) expectRowOf(line);
    // The update's own text, whitespace and all.
    expect(updateRow(lines[0]!)).toBe(`{"update":{ "sessionUpdate" : "agent_message_chunk" , "content" : { "type":"text","text":"a b" } }}`);
  });

  it("slices strings with escapes exactly: quotes, backslashes, braces, unicode and control escapes", () => {
    const texts = ['say "hi"', "back\\slash\\", '\\"', "{not} [json]", "é ✓ 🙂", "\u2028\u2029", "\u0000\u001f\t\n", '"}},"_meta":{"x":1}}'];
    for (const text of texts) {
      const line = JSON.stringify({
        jsonrpc: "2.0",
        method: "session/update",
        params: { sessionId: text, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
      });
      expectRowOf(line);
      // Written with \u escapes for every character, as another encoder may.
      expectRowOf(
        line.replace(/[^\x20-\x7e]|é/gu, (c) =>
          c
            .split("")
            .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`)
            .join(""),
        ),
      );
    }
    // An escaped key still names the member (JSON.parse unescapes it).
    expectRowOf(
      `{"jsonrpc":"2.0","method":"session/update","p\\u0061rams":{"sessionId":"s","upd\\u0061te":{"sessionUpdate":"x"},"_m\\u0065ta":{"k":"\\u0022"}}}`,
    );
  });

  it("keeps _meta at either level: the notification's beside the update, the update's inside it", () => {
    const inside = { ...update, _meta: { "berth/notice": { reason: "x" } } };
    const line = (params: object) => JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", ...params } });
    expect(expectRowOf(line({ update: inside }))).toBe(`{"update":${JSON.stringify(inside)}}`);
    expect(expectRowOf(line({ _meta: { a: [1] }, update }))).toBe(`{"update":${JSON.stringify(update)},"_meta":{"a":[1]}}`);
    expect(expectRowOf(line({ update: inside, _meta: { b: "}" } }))).toBe(`{"update":${JSON.stringify(inside)},"_meta":{"b":"}"}}`);
    // A _meta the host leaves out (null, false, 0, ""), as it does when it relays the notification.
    for (const meta of [null, false, 0, "", "x", 1]) expectRowOf(line({ update, _meta: meta }));
    expect(updateRow(line({ update, _meta: null }))).toBe(`{"update":${JSON.stringify(update)}}`);
    // A _meta of the JSON-RPC message itself is not the notification's.
    expectRowOf(`{"_meta":{"top":1},"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"x"}}}`);
  });

  it("takes the last of a key given twice, as JSON.parse does", () => {
    expectRowOf(
      `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"first"},"update":{"sessionUpdate":"last"}}}`,
    );
    expectRowOf(
      `{"jsonrpc":"2.0","params":{"sessionId":"s","update":{"sessionUpdate":"old"},"_meta":{"old":1}},"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"new"}}}`,
    );
    expectRowOf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","_meta":{"a":1},"update":{"sessionUpdate":"x"},"_meta":null}}`);
    // An earlier params that is no object at all, in a line without its jsonrpc: still sliced, from the last.
    for (const first of ["null", "0", "true", "[]", '"p"']) {
      const line = `{"method":"session/update","params":${first},"params":{"sessionId":"s","update":{"sessionUpdate":"x"}}}`;
      expect(expectRowOf(line)).toBe(`{"update":{"sessionUpdate":"x"}}`);
    }
  });

  it("agrees with JSON.parse on generated lines of random shape, order and spacing", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const space = () => pick(["", "", " ", "\n", "\t", " \r\n "]);
    const strings = ["", "a", 'q"q', "b\\", "\\\\", "}{][,:", "ü✓🙂", "\n\t", "\u2028"];
    const value = (depth: number): unknown => {
      const kind = Math.floor(random() * (depth > 2 ? 4 : 6));
      if (kind === 0) return pick(strings);
      if (kind === 1) return pick([0, -1, 2.5, 1e21, -0.001]);
      if (kind === 2) return pick([true, false, null]);
      if (kind === 3) return pick(strings) + pick(strings);
      if (kind === 4) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(strings), value(depth + 1)]));
    };
    /** JSON text with random spacing and member order. */
    const write = (item: unknown): string => {
      if (Array.isArray(item)) return `[${space()}${item.map((x) => write(x)).join(`${space()},${space()}`)}${space()}]`;
      if (item !== null && typeof item === "object") {
        const members = Object.entries(item).sort(() => random() - 0.5);
        return `{${space()}${members.map(([k, v]) => `${JSON.stringify(k)}${space()}:${space()}${write(v)}`).join(`${space()},${space()}`)}${space()}}`;
      }
      return JSON.stringify(item);
    };
    for (let i = 0; i < 2_000; i++) {
      const params: Record<string, unknown> = { sessionId: pick(strings), update: { sessionUpdate: pick(strings), value: value(0) } };
      if (random() < 0.5) params._meta = random() < 0.8 ? value(1) : null;
      if (random() < 0.3) params[pick(strings)] = value(1);
      const envelope: Record<string, unknown> = { jsonrpc: "2.0", method: "session/update", params };
      if (random() < 0.3) envelope._meta = value(1);
      expectRowOf(write(envelope));
    }
  });

  it("gives back as it is what is not such a line", () => {
    for (const line of [
      "",
      "[]",
      "{}",
      '{"params":[]}',
      '{"params":{"update":1}}',
      '{"jsonrpc":"2.0"',
      '{"params":{"update":{"a":1}',
      '{"p\\x":1}',
    ]) {
      expect(updateRow(line)).toBe(line);
    }
  });
});
