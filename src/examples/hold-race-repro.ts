#!/usr/bin/env node
/**
 * Reproduces the audited race against the real kernel: the last holder leaves while
 * the agent child is still being acquired. Before the fix the child ended with zero
 * holders and no release clock (a leak); now it is released once, after the grace.
 *
 *   npm run repro:hold-race
 */
import { systemClock } from "../lifecycle/clock.js";
import { deferred } from "../lifecycle/deferred.js";
import { Executions } from "../lifecycle/executions.js";
import { SessionHolds, StaleHoldError } from "../lifecycle/session-holds.js";

const GRACE_MS = 5;

interface Child {
  readonly pid: number;
}

const releases: Array<{ child: Child; afterMs: number }> = [];
const acquisition = deferred<Child>();
const started = Date.now();

const holds = new SessionHolds<Child>({
  clock: systemClock,
  releaseGraceMs: GRACE_MS,
  turns: new Executions(systemClock),
  acquire: () => acquisition.promise,
  stop: async (_sessionId, child) => {
    releases.push({ child, afterMs: Date.now() - started });
  },
});

const log = (line: string) => console.log(`[${String(Date.now() - started).padStart(3)} ms] ${line}`);

const ticket = holds.hold("session-1", "surface-1");
log(`hold by surface-1: state=${holds.state("session-1")}`);
ticket.release();
log(
  `surface-1 released while acquiring: holders=${holds.holderCount("session-1")}, release clock armed=${holds.releaseAt("session-1") !== undefined}`,
);

acquisition.resolve({ pid: 4242 });
ticket.child.catch((error: unknown) => {
  log(`surface-1's late acquisition refused by its fence: ${error instanceof StaleHoldError ? error.message : String(error)}`);
});
await new Promise((resolve) => setTimeout(resolve, 1));
log(
  `acquisition succeeded: state=${holds.state("session-1")}, holders=${holds.holderCount("session-1")}, release clock armed=${holds.releaseAt("session-1") !== undefined}`,
);

await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 10));
holds.close();
for (const release of releases) log(`released child pid ${release.child.pid} (${release.afterMs} ms after start)`);
console.log(`observed releases: ${releases.length}`);
process.exitCode = releases.length === 1 ? 0 : 1;
