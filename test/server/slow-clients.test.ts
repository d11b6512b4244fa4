import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { floodChunk } from "../../src/agents/demo-agent/commands/flood.js";
import { cleanUp, startFixture, waitUntil, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

const sockets: WebSocket[] = [];
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.terminate();
});

const CHUNKS = 40_000;
const CHUNK_BYTES = 512;
const FLOOD = `/flood ${CHUNKS} ${CHUNK_BYTES}`;
const KiB = 1024;
const MiB = 1024 * KiB;

interface Update {
  readonly sessionId: string;
  readonly update: { sessionUpdate: string; content?: { type: string; text?: string } };
  readonly _meta?: Record<string, unknown>;
}

/** An ACP client on a raw WebSocket, whose TCP socket the test can stop reading (a laptop asleep, a stalled tab). */
class RawClient {
  readonly updates: Update[] = [];
  private nextId = 1;
  private readonly answers = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } };
      if (message.method === "session/update") this.updates.push(message.params as Update);
      else if (message.id !== undefined && message.method === undefined) {
        const answer = this.answers.get(message.id);
        this.answers.delete(message.id);
        if (message.error) answer?.reject(new Error(message.error.message));
        else answer?.resolve(message.result);
      }
    });
  }

  /** Connected and initialized; `seqs`: it reads journal seqs (`berth/journalSeq`), so every update says which it is. */
  static async open(fixture: BerthFixture, { seqs }: { seqs: boolean }): Promise<RawClient> {
    const ws = new WebSocket(fixture.acpUrl, { headers: { authorization: `Bearer ${fixture.token}` } });
    sockets.push(ws);
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const raw = new RawClient(ws);
    await raw.request("initialize", { protocolVersion: 1, clientCapabilities: seqs ? { _meta: { "berth/journalSeq": true } } : {} });
    return raw;
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return new Promise((resolve, reject) => this.answers.set(id, { resolve, reject }));
  }

  /** Stops (or starts again) reading its TCP socket: what the host sends stays queued. */
  pause(): void {
    (this.ws as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  resume(): void {
    (this.ws as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  close(): void {
    this.ws.terminate();
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** The agent's message chunks, in the order they came. */
  chunks(): Update[] {
    return this.updates.filter((n) => n.update.sessionUpdate === "agent_message_chunk");
  }

  text(): string {
    return this.chunks()
      .map((n) => n.update.content?.text ?? "")
      .join("");
  }
}

/** One of the host's own metrics. */
async function metric(fixture: BerthFixture, name: string): Promise<number> {
  const text = await fixture.api("/metrics").then((response) => response.text());
  const line = text.split("\n").find((each) => each.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no metric ${name}`);
  return Number(line.slice(name.length + 1));
}

async function waitForMetric(fixture: BerthFixture, name: string, holds: (value: number) => boolean, what: string): Promise<number> {
  let value = await metric(fixture, name);
  const deadline = Date.now() + 20_000;
  while (!holds(value)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what} (${name} is ${value})`);
    await new Promise((resolve) => setImmediate(resolve));
    value = await metric(fixture, name);
  }
  return value;
}

const floodText = Array.from({ length: CHUNKS }, (_, index) => floodChunk(index, CHUNK_BYTES)).join("");

/** Every flood chunk exactly once and in order, as a seq reader sees them: the seqs each covers follow on without gap or overlap. */
function expectWholeFloodBySeq(reader: RawClient): void {
  const covered = reader.chunks().map((n) => {
    const to = n._meta?.["berth/seq"] as number;
    return { from: (n._meta?.["berth/seqFrom"] as number | undefined) ?? to, to };
  });
  const gaps = covered.slice(1).filter((range, index) => range.from !== covered[index]!.to + 1);
  expect(gaps).toEqual([]);
  expect(covered.at(-1)!.to - covered[0]!.from + 1).toBe(CHUNKS);
  expect(reader.text() === floodText).toBe(true);
}

/** Every flood chunk exactly once and in order, as a client that reads no seqs sees them (one update each). */
function expectWholeFlood(client: RawClient): void {
  const texts = client.chunks().map((n) => n.update.content?.text);
  expect(texts.length).toBe(CHUNKS);
  expect(texts.every((text, index) => text === floodChunk(index, CHUNK_BYTES))).toBe(true);
}

async function openSession(fixture: BerthFixture): Promise<{ owner: RawClient; sessionId: string }> {
  const owner = await RawClient.open(fixture, { seqs: false });
  const { sessionId } = (await owner.request("session/new", { cwd: fixture.workDir, mcpServers: [] })) as { sessionId: string };
  return { owner, sessionId };
}

async function watcher(fixture: BerthFixture, sessionId: string, seqs: boolean): Promise<RawClient> {
  const client = await RawClient.open(fixture, { seqs });
  await client.request("session/resume", { sessionId, cwd: fixture.workDir, mcpServers: [] });
  return client;
}

describe("clients that fall behind a flood (real sockets, the demo agent)", () => {
  it("a client that stops reading mid-flood is fed from the journal once it reads again: every chunk exactly once, in order", async () => {
    // Far below the 2 MiB at which a client is cut: only a client sent the live stream regardless would reach it.
    const fixture = await startFixture({ config: { server: { clientBufferBudget: "4MiB", clientHighWater: "256KiB" } }, maxBufferedBytes: 2 * MiB });
    const { owner, sessionId } = await openSession(fixture);
    const reader = await watcher(fixture, sessionId, true);
    const plain = await watcher(fixture, sessionId, false);
    reader.pause();
    plain.pause();
    const turn = owner.request("session/prompt", { sessionId, prompt: [{ type: "text", text: FLOOD }] });
    await waitForMetric(fixture, "berth_client_feeds_catching_up", (n) => n >= 2, "both paused clients are fed from the journal");
    reader.resume();
    plain.resume();
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    await waitUntil(() => reader.text().length >= floodText.length && plain.chunks().length >= CHUNKS, "both clients read the whole flood", 60_000);
    expectWholeFloodBySeq(reader);
    expectWholeFlood(plain);
    // The prompting client's answer came after every chunk of its turn.
    expectWholeFlood(owner);
    expect(reader.open && plain.open && owner.open).toBe(true);
    await waitForMetric(fixture, "berth_client_feeds_catching_up", (n) => n === 0, "every client is live again");
  }, 120_000);

  it("ten clients that stop reading keep what is queued under the budget; a fast client beside them gets everything", async () => {
    const budget = 2 * MiB;
    const fixture = await startFixture({ config: { server: { clientBufferBudget: budget, clientHighWater: "256KiB" } }, maxBufferedBytes: 2 * MiB });
    const { owner, sessionId } = await openSession(fixture);
    const fast = await watcher(fixture, sessionId, false);
    // Clients that read no seqs: each update is one chunk, under 1 KiB (a seq reader's merged chunks may be 64 KiB).
    const paused = await Promise.all(Array.from({ length: 10 }, () => watcher(fixture, sessionId, false)));
    for (const client of paused) client.pause();
    const turn = owner.request("session/prompt", { sessionId, prompt: [{ type: "text", text: FLOOD }] });
    await waitForMetric(fixture, "berth_client_feeds_catching_up", (n) => n >= 10, "the ten paused clients are fed from the journal");
    // What a client is sent past its share is one message at most (here a flood chunk with its envelope, under 1 KiB).
    const bound = budget + 12 * KiB;
    expect(await metric(fixture, "berth_client_queued_bytes")).toBeLessThanOrEqual(bound);
    // They leave without reading on (that a resumed client gets everything is the test above).
    for (const client of paused) client.close();
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    await waitUntil(() => fast.chunks().length >= CHUNKS, "the fast client read the whole flood", 60_000);
    expectWholeFlood(fast);
    expectWholeFlood(owner);
    expect(await metric(fixture, "berth_client_queued_bytes_peak")).toBeLessThanOrEqual(bound);
    expect(await metric(fixture, "berth_client_catchups_total")).toBeGreaterThanOrEqual(10);
  }, 120_000);
});
