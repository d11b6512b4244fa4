import { describe, expect, it } from "vitest";
import { readMessageHead } from "../../src/agents/message-head.js";

describe("reading what a refused line shows", () => {
  it("tells a response by its id and its result or error, cut or broken anywhere after them", () => {
    expect(readMessageHead('{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"x":"aaa')).toEqual({ kind: "response", id: 3 });
    expect(readMessageHead(' { "id" : "a\\"b" , "error" : {"code":-1')).toEqual({ kind: "response", id: 'a"b' });
    // Malformed further on, but whole up to there.
    expect(readMessageHead('{"jsonrpc":"2.0","id":7,"result":{"stopReason":end_turn}}')).toEqual({ kind: "response", id: 7 });
    // Braces and brackets inside strings do not end a value early.
    expect(readMessageHead('{"result":{"text":"}]{[\\\\"},"id":-2.5e1,"x"')).toEqual({ kind: "response", id: -25 });
  });

  it("tells a request by its id and method (a method makes it one, as for the SDK)", () => {
    expect(readMessageHead('{"jsonrpc":"2.0","id":1,"method":"x","result":{}}')).toEqual({ kind: "request", id: 1, method: "x" });
    expect(readMessageHead('{"jsonrpc":"2.0","id":"r1","method":"fs/read_text_file","params":{"pa')).toEqual({
      kind: "request",
      id: "r1",
      method: "fs/read_text_file",
    });
  });

  it("tells a request whose method is too long to keep, or not a string, as one still: it is answered, its method unnamed", () => {
    const long = "m".repeat(7_000);
    expect(readMessageHead(`{"jsonrpc":"2.0","id":5,"method":"${long}","params":{"x":1`)).toEqual({ kind: "request", id: 5, method: undefined });
    expect(readMessageHead('{"jsonrpc":"2.0","id":6,"method":7,"params":{')).toEqual({ kind: "request", id: 6, method: undefined });
  });

  it("reads nothing it cannot be sure of", () => {
    for (const text of [
      "not json",
      '{"jsonrpc":"2.0","id":12', // the id may go on: 123
      '{"jsonrpc":"2.0","id":null,"error":{}}', // no id to answer under
      '{"jsonrpc":"2.0","id":1}', // neither a result nor a method
      '{"jsonrpc":"2.0","method":"session/update","params":{', // a notification
      '{"jsonrpc":"2.0","result":{"a":"b"},"i', // the id would come after the cut
      '{"jsonrpc":"2.0","id":{"nested":1},"result":{}}', // not an id
      '{"bad\\q":1,"id":1,"result":{}}', // a key with a bad escape: nothing after it is read
      "[]",
      "",
    ]) {
      expect(readMessageHead(text), text).toEqual({ kind: "unknown" });
    }
  });

  it("reads a long line whole, so an id after megabytes counts, and no length of string exhausts the stack", () => {
    // An unterminated string of 9 million characters overflowed a backtracking pattern once.
    const text = "x".repeat(9_000_000);
    expect(readMessageHead(`{"jsonrpc":"2.0","id":3,"result":"${text}`)).toEqual({ kind: "unknown" });
    expect(readMessageHead(`{"jsonrpc":"2.0","id":3,"result":{"content":"${text}`)).toEqual({ kind: "response", id: 3 });
    expect(readMessageHead(`{"jsonrpc":"2.0","result":"${text}","id":3}`)).toEqual({ kind: "response", id: 3 });
    expect(readMessageHead(`{"jsonrpc":"2.0","params":{"content":"${text}"},"method":"fs/write_text_file","id":"w"}`)).toEqual({
      kind: "request",
      id: "w",
      method: "fs/write_text_file",
    });
  });
});
