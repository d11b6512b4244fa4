import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitUntilGone } from "../support/process-table.js";
import { demoAgentMain, killGroup } from "./demo-agent-process.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  const pids = children.splice(0).flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  for (const pid of pids) killGroup(pid, "SIGKILL");
  const leftBehind = await waitUntilGone(pids);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  expect(leftBehind, "processes left behind").toEqual([]);
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

interface Message {
  id?: number | string;
  method?: string;
  params?: { path?: string; sessionId?: string };
  result?: { sessionId?: string; stopReason?: string };
}

/** The demo agent on raw pipes: each read of its stdout is kept as it came, to see what one write held. */
function startRaw(args: string[]) {
  const child = spawn(process.execPath, [demoAgentMain, "--state-dir", tempDir("berth-batch-state-"), ...args], {
    detached: true,
    stdio: ["pipe", "pipe", "ignore"],
  });
  children.push(child);
  const reads: Message[][] = [];
  let partial = "";
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    reads.push(lines.filter((line) => line !== "").map((line) => JSON.parse(line) as Message));
    for (const wake of waiters.splice(0)) wake();
  });
  const messages = () => reads.flat();
  return {
    reads,
    send: (message: object) => child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`),
    /** The first message the agent sent that matches, once it came. */
    async next(matches: (message: Message) => boolean): Promise<Message> {
      for (;;) {
        const found = messages().find(matches);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

describe("the demo agent's --batch-writes", () => {
  it("a queued prompt's first request comes in the same write as the answer to the prompt before it", async () => {
    const agent = startRaw(["--busy-prompt", "queue", "--batch-writes"]);
    const cwd = tempDir("berth-batch-cwd-");
    agent.send({ id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } } });
    await agent.next((message) => message.id === 1);
    agent.send({ id: 2, method: "session/new", params: { cwd, mcpServers: [] } });
    const sessionId = (await agent.next((message) => message.id === 2)).result!.sessionId!;
    const prompt = (id: number, path: string) =>
      agent.send({ id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: `/read ${path}` }] } });
    const isRead = (path: string) => (message: Message) => message.method === "fs/read_text_file" && message.params?.path === path;

    prompt(3, "/first");
    const firstRead = await agent.next(isRead("/first"));
    prompt(4, "/second");
    agent.send({ id: firstRead.id, result: { content: "first\n" } });
    await agent.next(isRead("/second"));

    const answerRead = agent.reads.find((read) => read.some((message) => message.id === 3 && message.result !== undefined));
    expect(answerRead?.map((message) => message.method ?? `answer ${message.id}`)).toEqual(["session/update", "answer 3", "fs/read_text_file"]);
    expect(answerRead?.[2]?.params?.path).toBe("/second");
  });
});
