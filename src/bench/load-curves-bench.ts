import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { cpuSeconds, fmt, percentile, spread, table } from "./measure.js";
import { clientWithSession, fanOut, RUNS, type ServeProcess, startServe, stopServe, wsClient } from "./relay-bench.js";

/** Whole runs of `npm run bench` with `BERTH_BENCH_FULL=1` add the largest points of each curve. */
const FULL = process.env.BERTH_BENCH_FULL === "1";
const STREAMS = [1, 10, 50, 100];
const CLIENTS = [1, 10, 100, 500];
const LIVE_SESSIONS = FULL ? [1, 10, 50, 200] : [1, 10, 50];
const HISTORIES = FULL ? [1_000, 10_000, 100_000, 1_000_000] : [1_000, 10_000, 100_000];
/** Chunks streamed in all by a point of the streams curve, split among its sessions. */
const STREAMED = 30_000;
/** Room for 500 clients of one session and the sessions of the curves (the default cap is 512 connections). */
const config = { server: { maxConnections: 2_000 } };

type Row = [string, string, string?];

/** A `berth serve` of its own for `fn`; agents nobody holds are stopped after 1 s, so the points of a curve do not add up. */
async function withServe<T>(fn: (serve: ServeProcess, workDir: string) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-curves-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-curves-work-"));
  const serve = await startServe(dataDir, { config, releaseGrace: "1s" });
  try {
    return await fn(serve, workDir);
  } finally {
    await stopServe(serve);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}

const probeMain = fileURLToPath(new URL("./probe-process.js", import.meta.url));

/** A {@link probeMain} process on `serve`, ready: `start()` begins its probes, `stop()` ends them with their timings. */
async function startProbe(serve: ServeProcess, workDir: string) {
  const child = spawn(process.execPath, [probeMain, serve.acpUrl, serve.token, workDir], { stdio: ["pipe", "pipe", "inherit"], detached: true });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error("the probe process ended early");
    return value as string;
  };
  if ((await next()) !== "ready") throw new Error("the probe process did not start");
  return {
    start: () => child.stdin!.write("start\n"),
    async stop(): Promise<{ echoes: number[]; healthz: number[]; raised: boolean }> {
      child.stdin!.write("stop\n");
      const timings = JSON.parse(await next()) as { echoes: number[]; healthz: number[]; raised: boolean };
      await once(child, "exit");
      return { echoes: timings.echoes.sort((x, y) => x - y), healthz: timings.healthz.sort((x, y) => x - y), raised: timings.raised };
    },
  };
}

interface StreamsFigures {
  /** 1 if the probe ran ahead of the agents (nice -10), 0 if at normal priority. */
  probeRaised: number;
  cut: number;
  chunksPerSecond: number;
  cpuMicros: number;
  echoP50: number;
  echoP99: number;
  healthzP99: number;
}

type Client = Awaited<ReturnType<typeof clientWithSession>>;
type Probe = Awaited<ReturnType<typeof startProbe>>;

/**
 * The sessions of `floods` flood at once (each its own client), while a probe session answers echo turns and `/healthz`
 * is timed (from a process of its own): chunks per second in all, the host's CPU per chunk, the probe's prompt → first
 * chunk and `/healthz`'s p99.
 */
async function streamsAtOnce(serve: ServeProcess, floods: readonly Client[], probe: Probe): Promise<StreamsFigures> {
  const perSession = Math.ceil(STREAMED / floods.length);
  for (const { side } of floods) side.reset();
  const cpuBefore = cpuSeconds(serve.child.pid!);
  const start = performance.now();
  probe.start();
  // A client cut meanwhile (the keepalive ends one that answers no ping, which a starved benchmark process may not) is counted.
  let cut = 0;
  await Promise.all(
    floods.map(({ side, sessionId }) =>
      side.agent
        .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood ${perSession} 256` }] })
        .catch(() => cut++),
    ),
  );
  const seconds = (performance.now() - start) / 1000;
  const { echoes, healthz, raised } = await probe.stop();
  const chunks = floods.reduce((sum, { side }) => sum + side.chunks, 0);
  return {
    probeRaised: raised ? 1 : 0,
    cut,
    chunksPerSecond: chunks / seconds,
    cpuMicros: ((cpuSeconds(serve.child.pid!) - cpuBefore) * 1e6) / chunks,
    echoP50: percentile(echoes, 50),
    echoP99: percentile(echoes, 99),
    healthzP99: percentile(healthz, 99),
  };
}

async function streamsCurve(): Promise<Row[]> {
  return withServe(async (serve, workDir) => {
    const rows: Row[] = [];
    for (const streams of STREAMS) {
      const runs: StreamsFigures[] = [];
      // One after another: agents started all at once starve the host's writer thread on a small machine.
      const floods: Client[] = [];
      for (let i = 0; i < streams; i++) floods.push(await clientWithSession(serve, workDir));
      for (let run = 0; run < RUNS; run++) runs.push(await streamsAtOnce(serve, floods, await startProbe(serve, workDir)));
      for (const { side } of floods) side.connection.close();
      const of = (key: keyof StreamsFigures, format: (n: number) => string) =>
        spread(
          runs.map((each) => each[key]),
          format,
        );
      rows.push([`${streams} streaming: chunks/s in all`, of("chunksPerSecond", fmt.int)]);
      rows.push([`${streams} streaming: host CPU per chunk`, of("cpuMicros", (n) => `${n.toFixed(1)} µs`), "<= 10 µs"]);
      rows.push([
        `${streams} streaming: probe's prompt → first chunk p50`,
        of("echoP50", fmt.ms1),
        streams === 1 || streams === 100 ? "added <= 0.5 ms" : undefined,
      ]);
      rows.push([
        `${streams} streaming: probe's prompt → first chunk p99`,
        of("echoP99", fmt.ms1),
        streams === 1 || streams === 100 ? "added <= 2 ms" : undefined,
      ]);
      rows.push([`${streams} streaming: clients cut`, of("cut", String)]);
      rows.push([`${streams} streaming: the probe's priority`, of("probeRaised", (n) => (n ? "nice -10" : "normal"))]);
      rows.push([`${streams} streaming: /healthz p99`, of("healthzP99", fmt.ms1), streams === 50 ? "<= 50 ms" : undefined]);
    }
    return rows;
  });
}

async function clientsCurve(): Promise<Row[]> {
  return withServe(async (serve, workDir) => {
    const rows: Row[] = [];
    for (const clients of CLIENTS)
      rows.push([`${clients} client(s) of one session: deliveries/s`, fmt.int(await fanOut(serve, workDir, clients, 1_000))]);
    return rows;
  });
}

function residentMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/** Live sessions (an agent each, one prompt answered) on a host: its memory and file descriptors, then after they are released. */
async function liveSessionsCurve(): Promise<Row[]> {
  return withServe(async (serve, workDir) => {
    const pid = serve.child.pid!;
    const rows: Row[] = [[`idle host: resident memory / open files`, `${residentMb(pid).toFixed(0)} MB / ${openFiles(pid)}`]];
    for (const sessions of LIVE_SESSIONS) {
      const live = [];
      for (let i = 0; i < sessions; i++) {
        const each = await clientWithSession(serve, workDir);
        await each.side.agent.request(methods.agent.session.prompt, { sessionId: each.sessionId, prompt: [{ type: "text", text: "hello" }] });
        live.push(each);
      }
      rows.push([`${sessions} live: resident memory / open files`, `${residentMb(pid).toFixed(0)} MB / ${openFiles(pid)}`]);
      for (const { side } of live) side.connection.close();
      // Released once nobody held them for the grace; the host's open files fall back as the agents stop.
      const baseline = rows[0]![1].split(" / ")[1];
      const deadline = Date.now() + 30_000;
      while (String(openFiles(pid)) !== baseline && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      rows.push([`${sessions} released: resident memory / open files`, `${residentMb(pid).toFixed(0)} MB / ${openFiles(pid)}`]);
    }
    return rows;
  });
}

/** A session of `events` chunks of history: the host's start-up on that journal, then resume and load + prompt within the grace. */
async function historyCurve(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const events of HISTORIES) {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-history-"));
    const workDir = mkdtempSync(join(tmpdir(), "berth-history-work-"));
    try {
      let serve = await startServe(dataDir, { config });
      const { side, sessionId } = await clientWithSession(serve, workDir);
      await side.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood ${events} 16` }] });
      side.connection.close();
      await stopServe(serve);
      const bytes = statSync(join(dataDir, "berth.sqlite")).size;
      let start = performance.now();
      serve = await startServe(dataDir, { config });
      const startUp = performance.now() - start;
      const timings: number[] = [];
      try {
        for (const method of [methods.agent.session.resume, methods.agent.session.load, methods.agent.session.resume]) {
          const again = wsClient(serve);
          await again.initialize();
          start = performance.now();
          await again.agent.request(method, { sessionId, cwd: workDir, mcpServers: [] });
          await again.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
          timings.push(performance.now() - start);
          again.connection.close();
          await again.connection.closed;
        }
      } finally {
        await stopServe(serve);
      }
      const [coldResume, load, warmResume] = timings as [number, number, number];
      rows.push([`${fmt.int(events)} events: journal size / start-up`, `${(bytes / 2 ** 20).toFixed(1)} MiB / ${fmt.ms1(startUp)}`]);
      rows.push([
        `${fmt.int(events)} events: resume+prompt after the restart / load (replayed) / resume within the grace`,
        `${fmt.ms1(coldResume)} / ${fmt.ms1(load)} / ${fmt.ms1(warmResume)}`,
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(workDir, { recursive: true, force: true });
    }
  }
  return rows;
}

/** The load curves: sessions streaming at once, clients of one session, live sessions, history length. */
export async function runLoadCurvesBench(): Promise<void> {
  table(
    `Sessions streaming at once (${fmt.int(STREAMED)} chunks of 256 B in all), a probe session's echo turns and /healthz meanwhile; min / median / max of ${RUNS}`,
    await streamsCurve(),
  );
  table("Clients of one session: /flood 1000 256 delivered to each", await clientsCurve());
  table(`Live sessions (an agent each) and after their release${FULL ? "" : " (200 with BERTH_BENCH_FULL=1)"}`, await liveSessionsCurve());
  table(`History length${FULL ? "" : " (1,000,000 with BERTH_BENCH_FULL=1)"}`, await historyCurve());
}
