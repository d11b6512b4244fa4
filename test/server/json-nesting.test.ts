import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestedDeeperThan, requestIdOf } from "../../src/server/json-nesting.js";

const nested = (levels: number, inner = "") => "[".repeat(levels) + inner + "]".repeat(levels);

describe("the nesting depth of a client's message, counted without parsing", () => {
  it("counts objects and arrays, up to the limit and past it", () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(nestedDeeperThan(nested(64))).toBe(false);
    expect(nestedDeeperThan(nested(65))).toBe(true);
    expect(nestedDeeperThan(`{"a":${nested(63)}}`)).toBe(false);
    expect(nestedDeeperThan(`{"a":{"b":${nested(63)}}}`)).toBe(true);
    // Siblings do not add up: depth, not count.
    expect(nestedDeeperThan(`[${Array.from({ length: 500 }, () => nested(10)).join(",")}]`)).toBe(false);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ prompt: [{ type: "text", text: `${"[{".repeat(5_000)} "quoted \\" [[[ ${"]".repeat(200)}` }] });
    expect(nestedDeeperThan(text)).toBe(false);
    // An escaped backslash before the closing quote: the string ends there, and what follows counts.
    expect(nestedDeeperThan(`{"a":"\\\\","b":${nested(65)}}`)).toBe(true);
  });

  it("reads a deep request's top-level id, not an id nested in its params; none for a notification or a response", () => {
    expect(requestIdOf(`{"jsonrpc":"2.0","params":{"id":99,"x":${nested(6_000)}},"id":7,"method":"session/new"}`)).toBe(7);
    expect(requestIdOf(`{"jsonrpc":"2.0","id":"a:b","method":"m","params":${nested(100)}}`)).toBe("a:b");
    expect(requestIdOf(`{"jsonrpc":"2.0","method":"session/cancel","params":${nested(100)}}`)).toBeUndefined();
    expect(requestIdOf(`{"jsonrpc":"2.0","id":3,"result":${nested(100)}}`)).toBeUndefined();
    expect(requestIdOf(`{"jsonrpc":"2.0","id":{"x":1},"method":"m"}`)).toBeNull();
    expect(requestIdOf(`${nested(100)} not json`)).toBeNull();
  });
});
