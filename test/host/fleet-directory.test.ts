// The fleet directory's read of a session of its own host that is deleted or given up while the read is under way
// (docs/fleet.md, "One view"). The store is a real SQLite store (its hosts and leases in memory, one process); the test
// holds one read of the directory (a read of the sessions another host's change named), the moment the host's own
// change lands in a real fleet without waking the directory (its own sessions' notifications are skipped).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FleetDirectory, type PeerSession } from "../../src/host/fleet-directory.js";
import { silentLogger } from "../../src/host/logger.js";
import { SqliteBackend } from "../../src/store/sqlite-backend.js";
import type { StoreBackend } from "../../src/store/store-backend.js";
import { waitUntil } from "../support/process-table.js";

const T0 = Date.UTC(2025, 0, 1);
/** Longer than any test: a read after the first comes from a wake-up or from a read that asked for another. */
const INTERVAL_MS = 600_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Host A (this host) runs session `mine` on a real store; `store` is that store with a gate on `listPendingQuestions`
 * (a full read's, beside `listSessions`) and `readSessions` (a read of the sessions a change named): `hold()` makes the
 * next of them wait until `release()`.
 */
async function hostA() {
  const dir = mkdtempSync(join(tmpdir(), "berth-directory-"));
  const backend = SqliteBackend.open(join(dir, "berth.sqlite"));
  cleanups.push(async () => {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await backend.registerHost({ id: "host-a", url: null });
  await backend.registerHost({ id: "host-b", url: null });
  const lease = await backend.createSession({ id: "mine", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a");
  const running = new Set(["mine"]);

  let gate: { reached: boolean; opened: Promise<void> } | undefined;
  const store = new Proxy(backend, {
    get(target, key) {
      // A full read waits between the sessions and their questions; a read of the changed sessions before it reads them.
      if (key === "listPendingQuestions" || key === "readSessions")
        return async (...args: unknown[]) => {
          const held = gate;
          if (held) {
            held.reached = true;
            await held.opened;
          }
          return (target[key] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      const value = Reflect.get(target, key) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as StoreBackend;

  const directory = await FleetDirectory.open(store, "host-a", (sessionId) => running.has(sessionId), INTERVAL_MS, silentLogger());
  cleanups.push(() => directory.close());
  /** Each change told, with how the directory listed `mine` at that moment (undefined: not at all). */
  const changed: Array<{ id: string; mine: PeerSession | undefined }> = [];
  directory.changed.add((id) => changed.push({ id, mine: directory.session("mine") }));
  return {
    backend,
    lease,
    running,
    directory,
    changed,
    told: (id: string) => changed.find((change) => change.id === id),
    /** The directory's next read waits (see the gate above) until the function returned is called. */
    hold(): () => void {
      let open!: () => void;
      gate = { reached: false, opened: new Promise<void>((resolve) => (open = resolve)) };
      return () => {
        gate = undefined;
        open();
      };
    },
    reached: () => gate?.reached === true,
  };
}

describe("FleetDirectory: a session of this host's own that stops being run here while the directory reads", () => {
  it("deleted meanwhile: never listed, not as no host's either, and no change is told of it", async () => {
    const a = await hostA();
    expect(a.directory.session("mine")).toBeUndefined();
    const release = a.hold();
    // Host B's new session wakes the directory: that read (of the session the change named) waits.
    await a.backend.createSession({ id: "theirs", agent: "demo", cwd: "/w", createdAt: T0 }, "host-b");
    await waitUntil(a.reached, "the directory's read waits");
    // Host A deletes its session (the delete commits, then its writer lets the lease go).
    await a.backend.deleteSession(a.lease);
    a.running.delete("mine");
    release();
    await waitUntil(() => a.told("theirs") !== undefined, "the directory's read ended: host B's session is told");
    expect(a.told("theirs")?.mine).toBeUndefined();
    expect(a.told("mine")).toBeUndefined();
    expect(a.directory.session("mine")).toBeUndefined();
    expect(a.directory.sessions().map((peer) => peer.session.id)).toEqual(["theirs"]);
  });

  it("given up while fenced (its lease still names this host): left out of that read, listed as no host's by the next one", async () => {
    const a = await hostA();
    const release = a.hold();
    await a.backend.createSession({ id: "theirs", agent: "demo", cwd: "/w", createdAt: T0 }, "host-b");
    await waitUntil(a.reached, "the directory's read waits");
    // No heartbeat gets through: host A gives the session up; the store, which it cannot reach, still names it the owner.
    a.running.delete("mine");
    release();
    await waitUntil(() => a.told("theirs") !== undefined, "the directory's read ended: host B's session is told");
    expect(a.told("theirs")?.mine).toBeUndefined();
    // Nothing woke the directory since, and its next interval is minutes away: the read that follows is the one it asked for.
    await waitUntil(() => a.told("mine") !== undefined, "the directory read again and listed the session");
    expect(a.directory.session("mine")).toMatchObject({ owner: null, ownerOnline: false, session: { id: "mine" } });
    expect((await a.backend.getLease("mine"))?.hostId).toBe("host-a");
  });
});
