import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { methods } from "@agentclientprotocol/sdk";
import { findPostgresBinaries, startThrowawayCluster, type ThrowawayCluster } from "../store/postgres/throwaway-cluster.js";
import { fmt, percentile, table } from "./measure.js";
import { stopServe, wsClient, type CountingClient, type ServeProcess } from "./relay-bench.js";

const cliMain = fileURLToPath(new URL("../cli/main.js", import.meta.url));
const TURNS = 200;
/** Turns alternate between the two paths in blocks this long, so that a change of the machine's load weighs on both alike. */
const BLOCK = 20;
const WARM_UP_TURNS = 20;
const SECRET = "fleet-relay-bench-secret-0123456789";

interface Turns {
  /** Prompt sent → its answer, sorted (ms). */
  readonly answered: number[];
  /** Prompt sent → the agent's first chunk, sorted (ms). */
  readonly firstChunk: number[];
}

/**
 * The added latency of a prompt relayed through another host of a fleet (docs/fleet.md, "Routing"):
 * two `berth serve --store postgres://…` on one throwaway cluster, on loopback; the same session of
 * host A prompted by a client of A and by a client of host B (relayed to A over B's ACP connection
 * to it), in alternating blocks, each client holding the session only during its own block. The demo
 * agent echoes a short prompt; both paths journal the same events on A.
 */
export async function runFleetRelayBench(): Promise<void> {
  console.log("\nfleet routing: a prompt relayed through another host vs direct to the owner (loopback)");
  if (!findPostgresBinaries()) {
    console.log("  skipped: no PostgreSQL server binaries (install Debian's postgresql)");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "berth-fleet-relay-bench-"));
  const workDir = mkdtempSync(join(dir, "work-"));
  let cluster: ThrowawayCluster | undefined;
  const hosts: ServeProcess[] = [];
  try {
    cluster = await startThrowawayCluster();
    const a = await startFleetHost(cluster.url, "bench-a", dir);
    hosts.push(a);
    const b = await startFleetHost(cluster.url, "bench-b", dir);
    hosts.push(b);

    const onA = wsClient(a);
    await onA.initialize();
    const { sessionId } = await onA.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    await timeTurns(onA, sessionId, WARM_UP_TURNS);
    await onA.agent.request(methods.agent.session.close, { sessionId });
    const onB = wsClient(b);
    await onB.initialize();
    // B learns of A's session from the shared store within a heartbeat; the client may need a moment.
    const opened = await resumeWhenListed(onB, sessionId, workDir);
    await timeTurns(onB, sessionId, WARM_UP_TURNS);
    await onB.agent.request(methods.agent.session.close, { sessionId });

    const direct: Turns = { answered: [], firstChunk: [] };
    const relayed: Turns = { answered: [], firstChunk: [] };
    for (let done = 0; done < TURNS; done += BLOCK) {
      for (const [side, into] of [
        [onA, direct],
        [onB, relayed],
      ] as const) {
        await side.agent.request(methods.agent.session.resume, { sessionId, cwd: workDir, mcpServers: [] });
        const block = await timeTurns(side, sessionId, BLOCK);
        await side.agent.request(methods.agent.session.close, { sessionId });
        into.answered.push(...block.answered);
        into.firstChunk.push(...block.firstChunk);
      }
    }
    for (const turns of [direct, relayed]) for (const list of [turns.answered, turns.firstChunk]) list.sort((x, y) => x - y);
    onA.connection.close();
    onB.connection.close();

    const row = (name: string, sorted: number[], p: number): [string, string] => [`${name} p${p}`, fmt.ms(percentile(sorted, p))];
    table(`  ${TURNS} turns each ("ping", echoed in 3 chunks), in alternating blocks of ${BLOCK}, after ${WARM_UP_TURNS} each to warm up`, [
      row("direct to A: answered", direct.answered, 50),
      row("direct to A: answered", direct.answered, 95),
      row("through B: answered", relayed.answered, 50),
      row("through B: answered", relayed.answered, 95),
      ["added by the relay, median answered", fmt.ms(percentile(relayed.answered, 50) - percentile(direct.answered, 50))],
      ["added by the relay, median first chunk", fmt.ms(percentile(relayed.firstChunk, 50) - percentile(direct.firstChunk, 50))],
      ["session/resume through B (opens B's connection to A)", fmt.ms(opened)],
    ]);
    console.log(`  PostgreSQL ${cluster.version}: a throwaway cluster, fsync and synchronous_commit on; both hosts and the client on this machine`);
  } finally {
    await Promise.all(hosts.map((host) => stopServe(host).catch(() => undefined)));
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `turns` prompts of the session, one after the other, by a client holding it. */
async function timeTurns(side: CountingClient, sessionId: string, turns: number): Promise<Turns> {
  const answered: number[] = [];
  const firstChunk: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    side.reset();
    side.firstChunkAt = 0;
    const sent = performance.now();
    await side.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "ping" }] });
    answered.push(performance.now() - sent);
    firstChunk.push(side.firstChunkAt - sent);
  }
  return { answered, firstChunk };
}

/** `session/resume` through B once B lists A's session; how long the successful one took (ms). */
async function resumeWhenListed(side: CountingClient, sessionId: string, cwd: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { sessions } = await side.agent.request(methods.agent.session.list, {});
    if (sessions.some((session) => session.sessionId === sessionId)) break;
    if (Date.now() > deadline) throw new Error("host B never listed host A's session");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const start = performance.now();
  await side.agent.request(methods.agent.session.resume, { sessionId, cwd, mcpServers: [] });
  return performance.now() - start;
}

/** A fleet host on a port the OS gives it, registered at the address it listens on, with the cluster secret. */
async function startFleetHost(storeUrl: string, hostId: string, dir: string): Promise<ServeProcess> {
  const dataDir = mkdtempSync(join(dir, `${hostId}-`));
  const configFile = join(dataDir, "config.json");
  const fleet = { secret: SECRET };
  writeFileSync(configFile, JSON.stringify({ fleet, releaseGrace: "1h" }), { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [cliMain, "serve", "--port", "0", "--data-dir", dataDir, "--config", configFile, "--store", storeUrl, "--host-id", hostId],
    { stdio: ["ignore", "pipe", "ignore"], detached: true, env: { ...process.env, XDG_CONFIG_HOME: dataDir } },
  );
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve));
  const match = /\?token=([\w-]+) \(ACP: (ws:\/\/[^ ]+)\)$/.exec(line);
  if (!match) {
    child.kill("SIGKILL");
    throw new Error(`unexpected start-up line: ${line}`);
  }
  return { child, token: match[1]!, acpUrl: match[2]! };
}
