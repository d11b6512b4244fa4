/**
 * A probe of a running `berth serve`, in a process of its own so that what it times is the host's answer and not a
 * benchmark's event loop busy with a flood: echo turns on a session of its own (prompt → first chunk) and `/healthz`,
 * every 20 ms, from "start" on stdin to "stop"; then it prints both timings (ms) as one JSON line and exits.
 * Arguments: the ACP URL, the token, the working directory.
 */
import { get } from "node:http";
import { setPriority } from "node:os";
import { createInterface } from "node:readline";
import { clientWithSession, echoTurns } from "./relay-bench.js";

const [acpUrl, token, workDir] = process.argv.slice(2) as [string, string, string];
/**
 * Ahead of the agents for the CPU where allowed (root): among 50–100 agents flooding on a few cores, a probe of normal
 * priority times its own turns on the CPU more than the host's answers.
 */
let raised = true;
try {
  setPriority(-10);
} catch {
  raised = false;
}
const probe = await clientWithSession({ acpUrl, token }, workDir);
const healthzUrl = acpUrl.replace(/^ws/, "http").replace(/\/acp$/, "/healthz");

/** One `/healthz`, on a connection of its own: a kept-alive one may be closed by the server between two probes. */
function healthz(): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    get(healthzUrl, { agent: false, headers: { authorization: `Bearer ${token}` } }, (response) =>
      response.resume().once("end", () => resolve(performance.now() - start)),
    ).once("error", reject);
  });
}

const lines = createInterface({ input: process.stdin });
let probing = false;
const echoes: number[] = [];
const health: number[] = [];
const loops: Promise<void>[] = [];
process.stdout.write("ready\n");
for await (const line of lines) {
  if (line === "start") {
    probing = true;
    loops.push(
      (async () => {
        while (probing) echoes.push(...(await echoTurns(probe.side, probe.sessionId, 1)));
      })(),
      (async () => {
        while (probing) {
          health.push(await healthz());
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })(),
    );
  } else if (line === "stop") {
    probing = false;
    await Promise.all(loops);
    process.stdout.write(`${JSON.stringify({ echoes, healthz: health, raised })}\n`);
    break;
  }
}
probe.side.connection.close();
lines.close();
