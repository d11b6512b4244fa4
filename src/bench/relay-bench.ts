import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type ClientConnection, type Stream } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { demoAgentMain } from "../agents/agent-registry.js";
import { BareWatcher } from "./bare-watcher.js";
import { cpuSeconds, fmt, peakRssMb, percentile, spread, table } from "./measure.js";
import { LINE_BYTES, loopbackWebSocketMessagesPerSecond, rawPipeLinesPerSecond } from "./pipe-limits.js";

const cliMain = fileURLToPath(new URL("../cli/main.js", import.meta.url));
const FLOOD_CHUNKS = 50_000;
const FLOOD_BYTES = 256;
const ECHO_TURNS = 200;

/** A client that counts what arrives and notes when the first chunk of a turn did. */
export class CountingClient {
  chunks = 0;
  bytes = 0;
  firstChunkAt = 0;
  readonly connection: ClientConnection;

  constructor(stream: Stream) {
    this.connection = client({ name: "berth-bench" })
      .onNotification(methods.client.session.update, ({ params }) => {
        const update = params.update;
        if (update.sessionUpdate !== "agent_message_chunk" || update.content.type !== "text") return;
        if (this.chunks === 0) this.firstChunkAt = performance.now();
        this.chunks++;
        this.bytes += update.content.text.length;
      })
      .connect(stream);
  }

  get agent() {
    return this.connection.agent;
  }

  reset(): void {
    this.chunks = 0;
    this.bytes = 0;
  }

  async initialize(): Promise<void> {
    await this.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  }
}

/** One flood's figures; the host's CPU per chunk only through Berth. */
interface FloodRun {
  messagesPerSecond: number;
  bytesPerSecond: number;
  cpuMicrosPerChunk?: number;
}

interface RelayFigures {
  floods: FloodRun[];
  /** Each block's echo turns, prompt → first chunk, sorted (ms). */
  echoBlocks: number[][];
}

/** Runs of each measure: every goal is printed as min / median / max of these. */
export const RUNS = 3;

/** Echo turns, prompt → first chunk, sorted (ms). */
export async function echoTurns(clientSide: CountingClient, sessionId: string, turns: number): Promise<number[]> {
  const roundTrips: number[] = [];
  for (let i = 0; i < turns; i++) {
    clientSide.reset();
    const sent = performance.now();
    await clientSide.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "ping" }] });
    roundTrips.push(clientSide.firstChunkAt - sent);
  }
  return roundTrips.sort((a, b) => a - b);
}

/** Floods {@link RUNS} times, then {@link RUNS} blocks of echo turns; `hostPid` (through Berth) adds the host's CPU per chunk. */
async function measure(clientSide: CountingClient, sessionId: string, hostPid?: number): Promise<RelayFigures> {
  await clientSide.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/flood 100 16" }] });
  const floods: FloodRun[] = [];
  for (let run = 0; run < RUNS; run++) {
    clientSide.reset();
    const cpuBefore = hostPid === undefined ? 0 : cpuSeconds(hostPid);
    const start = performance.now();
    await clientSide.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: `/flood ${FLOOD_CHUNKS} ${FLOOD_BYTES}` }],
    });
    const seconds = (performance.now() - start) / 1000;
    floods.push({
      messagesPerSecond: clientSide.chunks / seconds,
      bytesPerSecond: clientSide.bytes / seconds,
      ...(hostPid === undefined ? {} : { cpuMicrosPerChunk: ((cpuSeconds(hostPid) - cpuBefore) * 1e6) / clientSide.chunks }),
    });
  }
  const echoBlocks: number[][] = [];
  for (let block = 0; block < RUNS; block++) echoBlocks.push(await echoTurns(clientSide, sessionId, ECHO_TURNS));
  return { floods, echoBlocks };
}

async function direct(workDir: string, stateDir: string): Promise<RelayFigures> {
  const agent = spawn(process.execPath, [demoAgentMain, "--state-dir", stateDir], { stdio: ["pipe", "pipe", "inherit"], detached: true });
  try {
    const stream = ndJsonStream(
      Writable.toWeb(agent.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(agent.stdout!) as ReadableStream<Uint8Array>,
    );
    const side = new CountingClient(stream);
    await side.initialize();
    const { sessionId } = await side.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    const figures = await measure(side, sessionId);
    side.connection.close();
    return figures;
  } finally {
    process.kill(-agent.pid!, "SIGKILL");
  }
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly acpUrl: string;
  readonly token: string;
}

/** `berth serve` on any free loopback port; `config` (if given) is its configuration file, `releaseGrace` its flag. */
export async function startServe(dataDir: string, options: { config?: object; releaseGrace?: string } = {}): Promise<ServeProcess> {
  if (options.config !== undefined) {
    mkdirSync(join(dataDir, "berth"), { recursive: true });
    writeFileSync(join(dataDir, "berth", "config.json"), JSON.stringify(options.config));
  }
  const args = [cliMain, "serve", "--port", "0", "--data-dir", dataDir, "--release-grace", options.releaseGrace ?? "1h", "--print-token"];
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "ignore"],
    detached: true,
    env: { ...process.env, XDG_CONFIG_HOME: dataDir },
  });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve));
  const match = /\?token=([\w-]+) \(ACP: (ws:\/\/[^ ]+)\)$/.exec(line);
  if (!match) {
    process.kill(-child.pid!, "SIGKILL");
    throw new Error(`unexpected start-up line: ${line}`);
  }
  return { child, token: match[1]!, acpUrl: match[2]! };
}

/** Where a `berth serve` is and its token. */
export type ServeAddress = Pick<ServeProcess, "acpUrl" | "token">;

export function wsClient(serve: ServeAddress): CountingClient {
  return new CountingClient(
    createWebSocketStream(serve.acpUrl, { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${serve.token}` } }),
  );
}

export async function stopServe(serve: ServeProcess): Promise<void> {
  const exited = new Promise((resolve) => serve.child.once("exit", resolve));
  serve.child.kill("SIGTERM");
  await exited;
}

/** A `berth serve` client that has initialized and created a session. */
export async function clientWithSession(serve: ServeAddress, workDir: string): Promise<{ side: CountingClient; sessionId: string }> {
  const side = wsClient(serve);
  await side.initialize();
  const { sessionId } = await side.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
  return { side, sessionId };
}

/** Bare clients of one session (each initialized and resumed on it), opened a few at a time. */
async function watchersOf(serve: ServeProcess, sessionId: string, workDir: string, count: number): Promise<BareWatcher[]> {
  const watchers: BareWatcher[] = [];
  while (watchers.length < count) {
    const batch = Math.min(25, count - watchers.length);
    watchers.push(...(await Promise.all(Array.from({ length: batch }, () => BareWatcher.open(serve.acpUrl, serve.token, sessionId, workDir)))));
  }
  return watchers;
}

/** Deliveries per second of a `/flood <chunks> 256` to `clients` clients of one session: the prompting one (an SDK client) and bare watchers. */
export async function fanOut(serve: ServeProcess, workDir: string, clients: number, chunks = 2_000): Promise<number> {
  const { side: owner, sessionId } = await clientWithSession(serve, workDir);
  const watchers = await watchersOf(serve, sessionId, workDir, clients - 1);
  owner.reset();
  for (const watcher of watchers) watcher.reset();
  const start = performance.now();
  await owner.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood ${chunks} ${FLOOD_BYTES}` }] });
  while (owner.chunks < chunks || watchers.some((watcher) => watcher.chunks < chunks)) await new Promise((resolve) => setTimeout(resolve, 1));
  const seconds = (performance.now() - start) / 1000;
  owner.connection.close();
  for (const watcher of watchers) watcher.close();
  return (chunks * clients) / seconds;
}

/** The events of a re-attach benchmark's history: one `/flood` of this many chunks. */
const HISTORY = 10_000;

/**
 * Cold start (`session/new` + first prompt) against re-attaching within the grace to a session whose history has
 * {@link HISTORY} events: `session/resume` + prompt (no history sent), and `session/load` + prompt (all of it replayed).
 */
async function reattach(serve: ServeProcess, workDir: string): Promise<Array<[string, string, string?]>> {
  const cold: number[] = [];
  const resumed: number[] = [];
  const loaded: number[] = [];
  const timed = async (fn: () => Promise<unknown>) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };
  for (let i = 0; i < RUNS * 3; i++) {
    const first = wsClient(serve);
    await first.initialize();
    let sessionId = "";
    cold.push(
      await timed(async () => {
        sessionId = (await first.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] })).sessionId;
        await first.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
      }),
    );
    if (i >= RUNS) {
      first.connection.close();
      continue;
    }
    await first.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood ${HISTORY} 16` }] });
    first.connection.close();
    await first.connection.closed;
    for (const [method, into] of [
      [methods.agent.session.resume, resumed],
      [methods.agent.session.load, loaded],
    ] as const) {
      const again = wsClient(serve);
      await again.initialize();
      into.push(
        await timed(async () => {
          await again.agent.request(method, { sessionId, cwd: workDir, mcpServers: [] });
          await again.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
        }),
      );
      again.connection.close();
      await again.connection.closed;
    }
  }
  const coldMedian = percentile(
    [...cold].sort((a, b) => a - b),
    50,
  );
  return [
    [`cold: session/new + first prompt (${cold.length} runs)`, spread(cold, fmt.ms1)],
    [`warm, ${fmt.int(HISTORY)}-event history: session/resume + prompt`, spread(resumed, fmt.ms1)],
    [`warm, ${fmt.int(HISTORY)}-event history: session/load (replayed) + prompt`, spread(loaded, fmt.ms1)],
    [
      "cold median / warm resume",
      spread(
        resumed.map((ms) => coldMedian / ms),
        (n) => `${n.toFixed(0)}×`,
      ),
      ">= 250×",
    ],
  ];
}

const SLOW_READERS = 10;
const SLOW_FLOOD = "/flood 300000 512";

/** A client that reads its socket 10 ms every second (a phone on a bad link): it counts messages, no more. */
async function slowReader(serve: ServeProcess, sessionId: string, workDir: string): Promise<{ ws: WebSocket; messages: () => number }> {
  const ws = new WebSocket(serve.acpUrl, { headers: { authorization: `Bearer ${serve.token}` } });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let messages = 0;
  const answered = new Set<number>();
  ws.on("message", (data) => {
    messages++;
    // Only the two answers are looked into; updates are only counted.
    if (String(data).startsWith('{"jsonrpc":"2.0","id":')) answered.add((JSON.parse(String(data)) as { id: number }).id);
  });
  const request = async (id: number, method: string, params: unknown) => {
    ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    while (!answered.has(id)) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  await request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  await request(2, "session/resume", { sessionId, cwd: workDir, mcpServers: [] });
  const tcp = (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  tcp.pause();
  const reading = setInterval(() => {
    tcp.resume();
    setTimeout(() => tcp.pause(), 10);
  }, 1_000);
  ws.once("close", () => clearInterval(reading));
  return { ws, messages: () => messages };
}

/** A figure of `berth serve`'s own metrics; undefined if it has no such metric. */
async function metricOf(serve: ServeProcess, name: string): Promise<number | undefined> {
  const text = await fetch(serve.acpUrl.replace(/^ws/, "http").replace(/\/acp$/, "/metrics"), {
    headers: { authorization: `Bearer ${serve.token}` },
  }).then((response) => response.text());
  const line = text.split("\n").find((each) => each.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Ten slow readers of a long flood beside the prompting client, on a `berth serve` of their own: the host's peak memory. */
async function slowReaders(): Promise<Array<[string, string]>> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-slow-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-slow-work-"));
  const serve = await startServe(dataDir);
  try {
    const idleRss = peakRssMb(serve.child.pid!);
    const owner = wsClient(serve);
    await owner.initialize();
    const { sessionId } = await owner.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    const readers = await Promise.all(Array.from({ length: SLOW_READERS }, () => slowReader(serve, sessionId, workDir)));
    const start = performance.now();
    await owner.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: SLOW_FLOOD }] });
    const seconds = (performance.now() - start) / 1000;
    const peakQueued = await metricOf(serve, "berth_client_queued_bytes_peak");
    const cut = readers.filter((reader) => reader.ws.readyState !== WebSocket.OPEN).length;
    for (const reader of readers) reader.ws.terminate();
    owner.connection.close();
    return [
      [`${SLOW_FLOOD}, the prompting client: chunks received / s`, `${fmt.int(owner.chunks)} / ${seconds.toFixed(1)} s`],
      ["host peak RSS (VmHWM): idle → after the flood", `${idleRss.toFixed(0)} → ${peakRssMb(serve.child.pid!).toFixed(0)} MB`],
      [
        "peak bytes queued for clients (berth_client_queued_bytes_peak)",
        peakQueued === undefined ? "n/a" : `${(peakQueued / 2 ** 20).toFixed(1)} MiB`,
      ],
      [`slow readers cut by the end of the flood`, `${cut} of ${SLOW_READERS}`],
    ];
  } finally {
    await stopServe(serve);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Relay through Berth vs the same agent driven directly; fan-out; re-attach vs cold start; slow readers. */
export async function runRelayBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-relay-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-relay-work-"));
  const serve = await startServe(dataDir);
  try {
    const straight = await direct(workDir, join(dataDir, "direct-agent"));
    const viaBerth = wsClient(serve);
    await viaBerth.initialize();
    const { sessionId } = await viaBerth.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    const relayed = await measure(viaBerth, sessionId, serve.child.pid);
    viaBerth.connection.close();
    const pipe: number[] = [];
    const socket: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      pipe.push(await rawPipeLinesPerSecond());
      socket.push(await loopbackWebSocketMessagesPerSecond());
    }
    const paired = (figure: (berth: FloodRun, direct: FloodRun) => number) => relayed.floods.map((run, i) => figure(run, straight.floods[i]!));
    const perBlock = (figures: RelayFigures, p: number) => figures.echoBlocks.map((block) => percentile(block, p));
    const added = (p: number) => relayed.echoBlocks.map((block, i) => percentile(block, p) - percentile(straight.echoBlocks[i]!, p));
    const messages = (figures: RelayFigures) => figures.floods.map((run) => run.messagesPerSecond);
    table(
      `Relay: /flood ${FLOOD_CHUNKS} × ${FLOOD_BYTES} B and ${RUNS} blocks of ${ECHO_TURNS} echo turns, direct stdio vs through Berth (WebSocket); min / median / max of ${RUNS}`,
      [
        [`raw pipe, ${LINE_BYTES} B lines (the ceiling): lines/s`, spread(pipe, fmt.int)],
        [`loopback WebSocket, corked, ${LINE_BYTES} B: messages/s`, spread(socket, fmt.int)],
        ["direct stdio: messages/s", spread(messages(straight), fmt.int)],
        ["through Berth: messages/s", spread(messages(relayed), fmt.int)],
        [
          "through Berth: bytes/s",
          spread(
            relayed.floods.map((run) => run.bytesPerSecond),
            fmt.int,
          ),
        ],
        [
          "Berth / direct (runs paired in order)",
          spread(
            paired((berth, direct) => (100 * berth.messagesPerSecond) / direct.messagesPerSecond),
            fmt.percent,
          ),
          ">= 85 %",
        ],
        [
          "host CPU per relayed chunk",
          spread(
            relayed.floods.map((run) => run.cpuMicrosPerChunk!),
            (n) => `${n.toFixed(1)} µs`,
          ),
          "<= 10 µs",
        ],
        ["echo turn, prompt → first chunk, direct p50", spread(perBlock(straight, 50), fmt.ms)],
        ["echo turn, prompt → first chunk, Berth p50", spread(perBlock(relayed, 50), fmt.ms)],
        ["added latency per message p50", spread(added(50), fmt.ms), "<= 0.5 ms"],
        ["added latency per message p99", spread(added(99), fmt.ms), "<= 2 ms"],
      ],
    );
    const fanOuts: Array<[string, string, string?]> = [];
    for (const clients of [1, 10, 100]) {
      const figures: number[] = [];
      for (let run = 0; run < RUNS; run++) figures.push(await fanOut(serve, workDir, clients));
      fanOuts.push([
        `${clients} client${clients > 1 ? "s" : ""}: deliveries/s`,
        spread(figures, fmt.int),
        clients === 100 ? ">= 250,000" : undefined,
      ]);
    }
    table(`Fan-out: one session's /flood 2000 ${FLOOD_BYTES} to many clients; min / median / max of ${RUNS}`, fanOuts);
    table(`Re-attach within the grace vs a cold session start (through Berth); min / median / max`, await reattach(serve, workDir));
    table(`Slow readers: ${SLOW_READERS} clients reading 10 ms every second beside the prompting one`, await slowReaders());
  } finally {
    await stopServe(serve);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}
