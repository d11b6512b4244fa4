import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type ClientConnection, type Stream } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { demoAgentMain } from "../agents/agent-registry.js";
import { fmt, percentile, table } from "./measure.js";

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

interface RelayFigures {
  messagesPerSecond: number;
  bytesPerSecond: number;
  roundTrips: number[];
}

const FLOOD_RUNS = 3;

/** Floods three times (the median run counts) and times echo turns (prompt → first chunk). */
async function measure(clientSide: CountingClient, sessionId: string): Promise<RelayFigures> {
  await clientSide.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/flood 100 16" }] });
  const runs: Array<{ messagesPerSecond: number; bytesPerSecond: number }> = [];
  for (let run = 0; run < FLOOD_RUNS; run++) {
    clientSide.reset();
    const start = performance.now();
    await clientSide.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: `/flood ${FLOOD_CHUNKS} ${FLOOD_BYTES}` }],
    });
    const seconds = (performance.now() - start) / 1000;
    runs.push({ messagesPerSecond: clientSide.chunks / seconds, bytesPerSecond: clientSide.bytes / seconds });
  }
  runs.sort((a, b) => a.messagesPerSecond - b.messagesPerSecond);
  const figures = { ...runs[Math.floor(FLOOD_RUNS / 2)]!, roundTrips: [] as number[] };
  for (let i = 0; i < ECHO_TURNS; i++) {
    clientSide.reset();
    const sent = performance.now();
    await clientSide.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "ping" }] });
    figures.roundTrips.push(clientSide.firstChunkAt - sent);
  }
  figures.roundTrips.sort((a, b) => a - b);
  return figures;
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

export async function startServe(dataDir: string): Promise<ServeProcess> {
  const child = spawn(process.execPath, [cliMain, "serve", "--port", "0", "--data-dir", dataDir, "--release-grace", "1h"], {
    stdio: ["ignore", "pipe", "ignore"],
    detached: true,
    env: { ...process.env, XDG_CONFIG_HOME: dataDir },
  });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve));
  const match = /\?token=([\w-]+) \(ACP: (ws:\/\/[^ ]+)\)$/.exec(line);
  if (!match) throw new Error(`unexpected start-up line: ${line}`);
  return { child, token: match[1]!, acpUrl: match[2]! };
}

export function wsClient(serve: ServeProcess): CountingClient {
  return new CountingClient(
    createWebSocketStream(serve.acpUrl, { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${serve.token}` } }),
  );
}

export async function stopServe(serve: ServeProcess): Promise<void> {
  const exited = new Promise((resolve) => serve.child.once("exit", resolve));
  serve.child.kill("SIGTERM");
  await exited;
}

async function fanOut(serve: ServeProcess, workDir: string, clients: number): Promise<[string, string]> {
  const owner = wsClient(serve);
  await owner.initialize();
  const { sessionId } = await owner.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
  const watchers = await Promise.all(
    Array.from({ length: clients - 1 }, async () => {
      const watcher = wsClient(serve);
      await watcher.initialize();
      await watcher.agent.request(methods.agent.session.resume, { sessionId, cwd: workDir, mcpServers: [] });
      return watcher;
    }),
  );
  const all = [owner, ...watchers];
  const chunks = 2_000;
  for (const side of all) side.reset();
  const start = performance.now();
  await owner.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood ${chunks} ${FLOOD_BYTES}` }] });
  while (all.some((side) => side.chunks < chunks)) await new Promise((resolve) => setTimeout(resolve, 1));
  const seconds = (performance.now() - start) / 1000;
  for (const side of all) side.connection.close();
  return [
    `fan-out to ${clients} client${clients > 1 ? "s" : ""}: ${chunks} chunks each`,
    `${fmt.ms(seconds * 1000)} (${fmt.int((chunks * clients) / seconds)} deliveries/s)`,
  ];
}

async function reattach(serve: ServeProcess, workDir: string): Promise<Array<[string, string]>> {
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < 8; i++) {
    const first = wsClient(serve);
    await first.initialize();
    let start = performance.now();
    const { sessionId } = await first.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    await first.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
    cold.push(performance.now() - start);
    first.connection.close();
    await first.connection.closed;
    const again = wsClient(serve);
    await again.initialize();
    start = performance.now();
    await again.agent.request(methods.agent.session.load, { sessionId, cwd: workDir, mcpServers: [] });
    await again.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
    warm.push(performance.now() - start);
    again.connection.close();
  }
  cold.sort((a, b) => a - b);
  warm.sort((a, b) => a - b);
  return [
    ["cold: session/new + first prompt, median", fmt.ms(percentile(cold, 50))],
    ["warm: re-attach (session/load within the grace) + prompt, median", fmt.ms(percentile(warm, 50))],
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

/** The most memory the process ever had resident (Linux), in MB. */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : Number.NaN;
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
    const relayed = await measure(viaBerth, sessionId);
    viaBerth.connection.close();
    const added = (p: number) => percentile(relayed.roundTrips, p) - percentile(straight.roundTrips, p);
    table(
      `Relay: /flood ${FLOOD_CHUNKS} × ${FLOOD_BYTES} B (median of ${FLOOD_RUNS}) and ${ECHO_TURNS} echo turns, direct stdio vs through Berth (WebSocket)`,
      [
        ["direct: messages/s", fmt.int(straight.messagesPerSecond)],
        ["through Berth: messages/s", fmt.int(relayed.messagesPerSecond)],
        ["direct: bytes/s", fmt.int(straight.bytesPerSecond)],
        ["through Berth: bytes/s", fmt.int(relayed.bytesPerSecond)],
        ["Berth / direct", `${((100 * relayed.messagesPerSecond) / straight.messagesPerSecond).toFixed(1)} %`, "≥ 70 %"],
        [
          "echo turn, prompt → first chunk, direct p50 / p99",
          `${fmt.ms(percentile(straight.roundTrips, 50))} / ${fmt.ms(percentile(straight.roundTrips, 99))}`,
        ],
        [
          "echo turn, prompt → first chunk, Berth p50 / p99",
          `${fmt.ms(percentile(relayed.roundTrips, 50))} / ${fmt.ms(percentile(relayed.roundTrips, 99))}`,
        ],
        ["added latency per message p50 / p99", `${fmt.ms(added(50))} / ${fmt.ms(added(99))}`],
      ],
    );
    table("Fan-out: one session's stream to many clients", [
      await fanOut(serve, workDir, 1),
      await fanOut(serve, workDir, 10),
      await fanOut(serve, workDir, 100),
    ]);
    table("Re-attach within the grace vs a cold session start (through Berth)", await reattach(serve, workDir));
    table(`Slow readers: ${SLOW_READERS} clients reading 10 ms every second beside the prompting one`, await slowReaders());
  } finally {
    await stopServe(serve);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}
