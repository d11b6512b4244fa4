import { PassThrough } from "node:stream";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { divertSessionUpdates } from "../../src/agents/session-update-fast-path.js";
import { TurnBudget } from "../../src/agents/turn-budget.js";

const line = (message: object) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
const update = (text: string) => ({
  method: "session/update",
  params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
});

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
  return text;
}

describe("the session/update fast path", () => {
  it("takes updates out in order, even split across chunks, passes every other line on unchanged, and tells its requests and responses in order", async () => {
    const stdout = new PassThrough();
    const updates: SessionNotification[] = [];
    const refused: string[] = [];
    const passing: string[] = [];
    const rest = divertSessionUpdates(stdout, {
      onUpdate: (n) => void updates.push(n),
      onResponse: (id) => void passing.push(`response ${id}`),
      onRequest: (id, method) => void passing.push(`request ${id} ${method}`),
      onRefused: (reason) => void refused.push(reason),
      answerAgent: () => expect.unreachable(),
    });
    const response = line({ id: 1, result: { stopReason: "end_turn" } });
    const request = line({ id: 7, method: "session/request_permission", params: { sessionId: "s" } });
    const all = [
      line(update("a")),
      request,
      line(update("b")),
      "not json\n",
      line({ id: 9, method: "session/update", params: {} }),
      line({ method: "session/update", params: { update: {} } }),
      response,
    ].join("");
    stdout.write(all.slice(0, 50));
    stdout.write(all.slice(50, 170));
    stdout.end(all.slice(170));
    const passed = await readAll(rest);
    expect(updates.map((n) => (n.update as { content: { text: string } }).content.text)).toEqual(["a", "b"]);
    expect(refused).toEqual(["session/update without a sessionId and an update kind"]);
    expect(passed).toBe([request, "not json\n", line({ id: 9, method: "session/update", params: {} }), response].join(""));
    expect(passing).toEqual(["request 7 session/request_permission", "request 9 session/update", "response 1"]);
  });

  it("refuses a line longer than the limit without buffering it, and carries on with the next", async () => {
    const stdout = new PassThrough();
    const updates: SessionNotification[] = [];
    const refused: string[] = [];
    const rest = divertSessionUpdates(
      stdout,
      {
        onUpdate: (n) => void updates.push(n),
        onResponse: () => undefined,
        onRequest: () => undefined,
        onRefused: (r) => void refused.push(r),
        answerAgent: () => expect.unreachable(),
      },
      300,
    );
    for (let i = 0; i < 50; i++) stdout.write("x".repeat(40));
    stdout.write("\n");
    stdout.end(line(update("after")));
    expect(await readAll(rest)).toBe("");
    expect(refused).toEqual(["a message 2000 bytes long, more than the limit of 300"]);
    expect(updates).toHaveLength(1);
  });

  it("reads a last line without its newline as the SDK does: an update taken out, an answer told and passed on, one too long refused", async () => {
    const run = async (text: string) => {
      const stdout = new PassThrough();
      const seen: string[] = [];
      const rest = divertSessionUpdates(
        stdout,
        {
          onUpdate: (n) => void seen.push(`update ${(n.update as { content: { text: string } }).content.text}`),
          onResponse: (id) => void seen.push(`response ${id}`),
          onRequest: () => expect.unreachable(),
          onRefused: (r) => void seen.push(`refused: ${r}`),
          answerAgent: () => expect.unreachable(),
        },
        300,
      );
      stdout.write(text.slice(0, 20));
      stdout.end(text.slice(20));
      return { passed: await readAll(rest), seen };
    };
    expect(await run(line(update("last")).trimEnd())).toEqual({ passed: "", seen: ["update last"] });
    const answer = line({ id: 3, result: {} }).trimEnd();
    expect(await run(answer)).toEqual({ passed: `${answer}\n`, seen: ["response 3"] });
    const long = line({ id: 4, result: { padding: "x".repeat(400) } }).trimEnd();
    const refused = await run(long);
    expect(JSON.parse(refused.passed)).toMatchObject({ id: 4, error: { code: -32603, data: { code: "agent_answer_too_large" } } });
    expect(refused.seen).toEqual([
      `refused: the answer to request 4 is ${long.length} bytes long, more than the limit of 300: the request fails`,
      "response 4",
    ]);
  });

  it("counts a line's UTF-8 bytes against the limit, as the SDK does: multi-byte text over it is refused here", async () => {
    const stdout = new PassThrough();
    const refused: string[] = [];
    const rest = divertSessionUpdates(
      stdout,
      {
        onUpdate: () => expect.unreachable(),
        onResponse: () => undefined,
        onRequest: () => undefined,
        onRefused: (r) => void refused.push(r),
        answerAgent: () => expect.unreachable(),
      },
      300,
    );
    // 100 "€" are 100 UTF-16 units but 300 bytes: the first line is at the limit, the second (101 of them, in two
    // writes that split a character) over it.
    stdout.write(`${"€".repeat(100)}\n${"€".repeat(50)}`);
    stdout.write(Buffer.from("€").subarray(0, 1));
    stdout.write(Buffer.concat([Buffer.from("€").subarray(1), Buffer.from(`${"€".repeat(50)}\n`)]));
    stdout.end();
    expect(await readAll(rest)).toBe(`${"€".repeat(100)}\n`);
    expect(refused).toEqual(["a message 303 bytes long, more than the limit of 300"]);
  });

  it("hands the SDK an error answer in place of a refused answer (too long, or not JSON), under its id, and tells it as a response", async () => {
    const stdout = new PassThrough();
    const refused: string[] = [];
    const responses: unknown[] = [];
    const rest = divertSessionUpdates(
      stdout,
      {
        onUpdate: () => undefined,
        onResponse: (id) => void responses.push(id),
        onRequest: () => undefined,
        onRefused: (r) => void refused.push(r),
        answerAgent: () => expect.unreachable(),
      },
      300,
    );
    // Too long, split across writes: only its start is kept, and it shows the id before the result.
    const long = line({ id: 4, result: { stopReason: "end_turn", _meta: { padding: "x".repeat(1_000) } } });
    stdout.write(long.slice(0, 100));
    stdout.write(long.slice(100, 700));
    stdout.write(long.slice(700));
    stdout.write('{"jsonrpc":"2.0","id":"p-5","result":{"stopReason":"end_turn"\n');
    stdout.end(line({ id: 6, result: {} }));
    const passed = (await readAll(rest))
      .split("\n")
      .filter(Boolean)
      .map((text) => JSON.parse(text) as object);
    expect(passed).toEqual([
      {
        jsonrpc: "2.0",
        id: 4,
        error: {
          code: -32603,
          message: `Internal error: the agent's answer is ${long.length - 1} bytes long, more than the limit of 300; Berth refused it`,
          data: { code: "agent_answer_too_large", size: long.length - 1, limit: 300 },
        },
      },
      {
        jsonrpc: "2.0",
        id: "p-5",
        error: {
          code: -32603,
          message: "Internal error: the agent's answer is not valid JSON; Berth refused it",
          data: { code: "agent_answer_not_json" },
        },
      },
      { jsonrpc: "2.0", id: 6, result: {} },
    ]);
    expect(responses).toEqual([4, "p-5", 6]);
    expect(refused).toEqual([
      `the answer to request 4 is ${long.length - 1} bytes long, more than the limit of 300: the request fails`,
      "the answer to request p-5 is not valid JSON: the request fails",
    ]);
  });

  it("answers a refused request of the agent's with an error under its id, its method too long to read or not; a refused notification is only dropped", async () => {
    const stdout = new PassThrough();
    const refused: string[] = [];
    const answers: unknown[] = [];
    const rest = divertSessionUpdates(
      stdout,
      {
        onUpdate: () => expect.unreachable(),
        onResponse: () => expect.unreachable(),
        onRequest: () => expect.unreachable(),
        onRefused: (r) => void refused.push(r),
        answerAgent: (answer) => {
          expect(answer.endsWith("\n")).toBe(true);
          answers.push(JSON.parse(answer));
        },
      },
      300,
    );
    const write = line({ id: 8, method: "fs/write_text_file", params: { sessionId: "s", path: "/a", content: "y".repeat(400) } });
    const size = write.length - 1;
    stdout.write(write);
    stdout.write(
      line({ method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", text: "z".repeat(400) } } }),
    );
    const unnamed = line({ id: 10, method: "m".repeat(7_000), params: {} });
    stdout.write(unnamed);
    stdout.write('{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{\n');
    stdout.end('{"jsonrpc":"2.0","method":"session/update","params":\n');
    // Not JSON and no id to answer under: on to the SDK, which answers with a parse error under id null, as ever.
    expect(await readAll(rest)).toBe('{"jsonrpc":"2.0","method":"session/update","params":\n');
    expect(answers).toEqual([
      {
        jsonrpc: "2.0",
        id: 8,
        error: {
          code: -32600,
          message: `Invalid request: the message is ${size} bytes long, more than the limit of 300`,
          data: { size, limit: 300 },
        },
      },
      {
        jsonrpc: "2.0",
        id: 10,
        error: {
          code: -32600,
          message: `Invalid request: the message is ${unnamed.length - 1} bytes long, more than the limit of 300`,
          data: { size: unnamed.length - 1, limit: 300 },
        },
      },
      { jsonrpc: "2.0", id: 9, error: { code: -32700, message: "Parse error: the message is not valid JSON" } },
    ]);
    expect(refused).toEqual([
      `request 8 (fs/write_text_file) is ${size} bytes long, more than the limit of 300: answered with an error`,
      expect.stringMatching(/^a message \d+ bytes long, more than the limit of 300$/),
      `request 10 (its method unreadable) is ${unnamed.length - 1} bytes long, more than the limit of 300: answered with an error`,
      "request 9 (fs/read_text_file) is not valid JSON: answered with an error",
    ]);
  });

  it("counts and reads a line as the SDK does: a CRLF's \\r is not counted, a trailing no-break space is trimmed, a number ending the line is whole", async () => {
    const stdout = new PassThrough();
    const seen: string[] = [];
    const rest = divertSessionUpdates(
      stdout,
      {
        onUpdate: () => expect.unreachable(),
        onResponse: (id) => void seen.push(`response ${id}`),
        onRequest: () => expect.unreachable(),
        onRefused: (reason) => void seen.push(reason),
        answerAgent: () => expect.unreachable(),
      },
      300,
    );
    /** A response to `id` of exactly `bytes` bytes. */
    const sized = (id: number, bytes: number) => {
      const start = `{"jsonrpc":"2.0","id":${id},"result":{"x":"`;
      return `${start}${"y".repeat(bytes - start.length - 3)}"}}`;
    };
    const atLimit = `${sized(1, 300)}\r\n`;
    const overLimit = `${sized(2, 301)}\r\n`;
    const noBreakSpace = `{"jsonrpc":"2.0","id":3,"result":{}}\u00a0\n`;
    // The \r ends a write of its own, then its \n comes: the length is checked on both.
    stdout.write(atLimit.slice(0, -1));
    stdout.write(atLimit.slice(-1));
    stdout.write(overLimit.slice(0, -1));
    stdout.write(overLimit.slice(-1));
    stdout.write(noBreakSpace);
    stdout.end('{"jsonrpc":"2.0","result":[1,2],"id":4\n');
    const passed = await readAll(rest);
    expect(seen).toEqual([
      "response 1",
      "the answer to request 2 is 301 bytes long, more than the limit of 300: the request fails",
      "response 2",
      "response 3",
      "the answer to request 4 is not valid JSON: the request fails",
      "response 4",
    ]);
    expect(passed.split("\n").slice(0, 3)).toEqual([atLimit.slice(0, -1), expect.stringContaining('"id":2,"error"'), noBreakSpace.slice(0, -1)]);
  });

  it("answers a refused answer or request whose id comes last, after megabytes (fed in pieces) or after broken JSON", async () => {
    const stdout = new PassThrough();
    const seen: string[] = [];
    const answers: unknown[] = [];
    const limit = 1024 * 1024;
    const rest = divertSessionUpdates(
      stdout,
      {
        onUpdate: () => expect.unreachable(),
        onResponse: (id) => void seen.push(`response ${id}`),
        onRequest: () => expect.unreachable(),
        onRefused: (r) => void seen.push(`refused: ${r}`),
        answerAgent: (answer) => void answers.push(JSON.parse(answer)),
      },
      limit,
    );
    // Nested values whose strings hold braces, quotes, escapes and `"id":`, none of them the message's id.
    const decoys = { text: '}]"id":1,"method":"x"{[\\', list: [{ id: 2 }, ['"id":3']], id: 4 };
    const result = { content: Array.from({ length: 50_000 }, (_, i) => ({ ...decoys, n: i })) };
    const answer = `{"jsonrpc":"2.0","result":${JSON.stringify(result)},"id":7}\n`;
    const request = `{"jsonrpc":"2.0","params":{"content":"${"y".repeat(3 * limit)}","id":5},"method":"fs/write_text_file","id":"w-8"}\n`;
    expect(answer.length).toBeGreaterThan(4 * limit);
    for (const text of [answer, request]) for (let at = 0; at < text.length; at += 65_536) stdout.write(text.slice(at, at + 65_536));
    stdout.write('{"jsonrpc":"2.0","result":{"stopReason":end_turn},"id":9}\n');
    stdout.end('{"jsonrpc":"2.0","params":{"path":/a},"method":"fs/read_text_file","id":10}\n');
    const passed = (await readAll(rest))
      .split("\n")
      .filter(Boolean)
      .map((text) => JSON.parse(text) as object);
    const size = { answer: answer.length - 1, request: request.length - 1 };
    expect(passed).toEqual([
      {
        jsonrpc: "2.0",
        id: 7,
        error: {
          code: -32603,
          message: `Internal error: the agent's answer is ${size.answer} bytes long, more than the limit of ${limit}; Berth refused it`,
          data: { code: "agent_answer_too_large", size: size.answer, limit },
        },
      },
      {
        jsonrpc: "2.0",
        id: 9,
        error: {
          code: -32603,
          message: "Internal error: the agent's answer is not valid JSON; Berth refused it",
          data: { code: "agent_answer_not_json" },
        },
      },
    ]);
    expect(answers).toEqual([
      {
        jsonrpc: "2.0",
        id: "w-8",
        error: {
          code: -32600,
          message: `Invalid request: the message is ${size.request} bytes long, more than the limit of ${limit}`,
          data: { size: size.request, limit },
        },
      },
      { jsonrpc: "2.0", id: 10, error: { code: -32700, message: "Parse error: the message is not valid JSON" } },
    ]);
    expect(seen).toEqual([
      `refused: the answer to request 7 is ${size.answer} bytes long, more than the limit of ${limit}: the request fails`,
      "response 7",
      `refused: request w-8 (fs/write_text_file) is ${size.request} bytes long, more than the limit of ${limit}: answered with an error`,
      "refused: the answer to request 9 is not valid JSON: the request fails",
      "response 9",
      "refused: request 10 (fs/read_text_file) is not valid JSON: answered with an error",
    ]);
  });

  it("reads the id and method of a line over the limit across writes that split a UTF-8 character", async () => {
    const stdout = new PassThrough();
    const refused: string[] = [];
    const answers: unknown[] = [];
    const rest = divertSessionUpdates(
      stdout,
      {
        onUpdate: () => expect.unreachable(),
        onResponse: () => expect.unreachable(),
        onRequest: () => expect.unreachable(),
        onRefused: (r) => void refused.push(r),
        answerAgent: (answer) => void answers.push(JSON.parse(answer)),
      },
      300,
    );
    const text = Buffer.from(`{"params":{"text":"${"€".repeat(200)}"},"method":"x/é€😀","id":"€-1"}\n`);
    // Every write ends inside a character of the method or the id (its first byte only).
    const cuts = ["x/é", "x/é€", "x/é€😀", '"id":"€'].map((start) => text.indexOf(start) + Buffer.byteLength(start) - 1);
    let from = 0;
    for (const cut of cuts) {
      stdout.write(text.subarray(from, cut));
      from = cut;
    }
    stdout.end(text.subarray(from));
    expect(await readAll(rest)).toBe("");
    const size = text.length - 1;
    expect(answers).toEqual([
      {
        jsonrpc: "2.0",
        id: "€-1",
        error: {
          code: -32600,
          message: `Invalid request: the message is ${size} bytes long, more than the limit of 300`,
          data: { size, limit: 300 },
        },
      },
    ]);
    expect(refused).toEqual([`request €-1 (x/é€😀) is ${size} bytes long, more than the limit of 300: answered with an error`]);
  });

  it("drops what arrives after the SDK let go of the stream, without throwing", async () => {
    const stdout = new PassThrough();
    const rest = divertSessionUpdates(stdout, {
      onUpdate: () => undefined,
      onResponse: () => undefined,
      onRequest: () => undefined,
      onRefused: () => undefined,
      answerAgent: () => undefined,
    });
    await rest.cancel();
    // 'data' is emitted inside write(): a throwing listener would surface right here.
    expect(() => stdout.write(line({ id: 1, result: {} }))).not.toThrow();
    expect(() => stdout.end("{}\n")).not.toThrow();
  });

  describe("paced by a budget of lines a turn shared by every output", () => {
    /** An output of `name` on `budget`: what it handled, in order, and how often it was paused and resumed. */
    function pacedOutput(budget: TurnBudget, name: string, handled: string[]) {
      const stdout = new PassThrough();
      const pauses: number[] = [];
      let resumes = 0;
      const rest = divertSessionUpdates(
        stdout,
        {
          onUpdate: (n) => void handled.push(`${name} ${(n.update as { content: { text: string } }).content.text}`),
          onResponse: (id) => void handled.push(`${name} response ${id}`),
          onRequest: () => undefined,
          onRefused: (reason) => expect.unreachable(reason),
          answerAgent: () => expect.unreachable(),
        },
        undefined,
        {
          take: () => budget.take(),
          next: (handle) => budget.next(handle),
          pause: () => {
            pauses.push(handled.length);
            stdout.pause();
          },
          resume: () => {
            resumes++;
            stdout.resume();
          },
        },
      );
      return { stdout, rest, pauses, resumes: () => resumes };
    }

    it("handles a turn's share of the lines, pauses the pipe, and handles the rest on the next turns, in order, before the end", async () => {
      const handled: string[] = [];
      const output = pacedOutput(new TurnBudget(3), "a", handled);
      const texts = Array.from({ length: 10 }, (_, i) => String(i));
      output.stdout.end([...texts.map((text) => line(update(text))), line({ id: 1, result: {} })].join(""));
      const passed = await readAll(output.rest);
      expect(handled).toEqual([...texts.map((text) => `a ${text}`), "a response 1"]);
      expect(passed).toBe(line({ id: 1, result: {} }));
      // Three lines a turn: paused after the first three, and resumed once all were handled.
      expect(output.pauses[0]).toBe(3);
      expect(output.pauses).toHaveLength(1);
      expect(output.resumes()).toBe(1);
    });

    it("shares one budget between outputs: the one that waited goes first on the next turn, and what it read meanwhile after what it had", async () => {
      const handled: string[] = [];
      const budget = new TurnBudget(4);
      const a = pacedOutput(budget, "a", handled);
      const b = pacedOutput(budget, "b", handled);
      const lines = (name: string, from: number, count: number) =>
        Array.from({ length: count }, (_, i) => line(update(`${name}${from + i}`))).join("");
      // In one turn: a's six lines spend the budget and wait; b's three wait behind them.
      a.stdout.write(lines("a", 0, 6));
      b.stdout.write(lines("b", 0, 3));
      a.stdout.end(lines("a", 6, 2));
      b.stdout.end();
      await Promise.all([readAll(a.rest), readAll(b.rest)]);
      expect(handled.filter((entry) => entry.startsWith("a "))).toEqual(Array.from({ length: 8 }, (_, i) => `a a${i}`));
      expect(handled.filter((entry) => entry.startsWith("b "))).toEqual(["b b0", "b b1", "b b2"]);
      expect(handled.slice(0, 4)).toEqual(["a a0", "a a1", "a a2", "a a3"]);
      // a paused when the first turn's four were handled; b, read in that turn, waited for a later one.
      expect(a.pauses[0]).toBe(4);
      expect(b.pauses[0]).toBe(4);
      expect(a.resumes()).toBe(a.pauses.length);
      expect(b.resumes()).toBe(b.pauses.length);
    });

    it("a pipe that fails while lines wait: what was read is handled and passed on first, then the SDK is told the error", async () => {
      const handled: string[] = [];
      const output = pacedOutput(new TurnBudget(2), "a", handled);
      output.stdout.write([line(update("0")), line(update("1")), line(update("2")), line({ id: 7, result: {} })].join(""));
      output.stdout.destroy(new Error("EIO"));
      const reader = output.rest.getReader();
      const decoder = new TextDecoder();
      let passed = "";
      const failure = await (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return undefined;
          passed += decoder.decode(value);
        }
      })().catch((error: unknown) => error);
      expect(handled).toEqual(["a 0", "a 1", "a 2", "a response 7"]);
      expect(passed).toBe(line({ id: 7, result: {} }));
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toBe("EIO");
    });
  });
});
