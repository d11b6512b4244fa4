import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/store/events.js";
import { useStoreFiles } from "./fixture.js";

const files = useStoreFiles();
const compiledStore = resolve("dist/store/store.js");
const SESSIONS = ["s1", "s2"];
const BATCHES_BEFORE_READY = 300;

// Appends forever, alternating sessions, single events and 10-event transactions, until it is killed.
const writerScript = `
import { Store } from ${JSON.stringify(pathToFileURL(compiledStore).href)};
const [path, round] = process.argv.slice(2);
const store = Store.open(path);
const sessions = ${JSON.stringify(SESSIONS)};
for (const id of sessions) {
  if (!store.sessions.get(id)) store.sessions.create({ id, agent: "demo", cwd: "/work", createdAt: Date.now() });
}
for (let batch = 0; ; batch++) {
  const sessionId = sessions[batch % sessions.length];
  const size = batch % 3 === 0 ? 1 : 10;
  const write = () => {
    for (let index = 0; index < size; index++) {
      store.events.append(sessionId, "update", { round: Number(round), batch, index, size }, Date.now());
    }
  };
  if (size === 1) write();
  else store.transaction(write);
  if (batch + 1 === ${BATCHES_BEFORE_READY}) process.stdout.write("ready\\n");
}
`;

type Payload = { round: number; batch: number; index: number; size: number };

let running: ChildProcess | undefined;

afterEach(() => {
  if (running?.pid !== undefined && running.exitCode === null && running.signalCode === null) {
    process.kill(-running.pid, "SIGKILL");
  }
  running = undefined;
});

beforeAll(() => {
  if (!existsSync(compiledStore)) throw new Error(`${compiledStore} is missing: run \`npm run build\` first`);
});

/** Starts the writer, waits until it has committed a few hundred batches, and SIGKILLs its process group mid-write. */
async function writeThenKill(path: string, round: number): Promise<void> {
  const script = join(dirname(path), "writer.mjs");
  writeFileSync(script, writerScript);
  const child = spawn(process.execPath, [script, path, String(round)], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  running = child;
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<NodeJS.Signals | null>((resolveExit) => child.on("exit", (_code, signal) => resolveExit(signal)));

  await new Promise<void>((ready, failed) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) ready();
    });
    child.on("exit", (code) => failed(new Error(`writer exited early with ${code}: ${stderr}`)));
  });
  process.kill(-child.pid!, "SIGKILL");
  expect(await exited).toBe("SIGKILL");
  expect(() => process.kill(-child.pid!, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
}

function expectConsistentJournal(events: JournalEvent[], sessionIndex: number, rounds: number): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const batches = new Map<string, number[]>();
  for (const event of events) {
    const { round, batch, index } = event.payload as Payload;
    const key = `${round}/${batch}`;
    batches.set(key, [...(batches.get(key) ?? []), index]);
  }
  for (let round = 1; round <= rounds; round++) {
    const ofRound = events.map((e) => e.payload as Payload).filter((p) => p.round === round);
    const numbers = [...new Set(ofRound.map((p) => p.batch))];
    // Every batch the writer committed is there, whole, in order; the one cut off by the kill is absent.
    expect(numbers).toEqual(numbers.map((_, i) => sessionIndex + i * SESSIONS.length));
    expect(numbers.length).toBeGreaterThanOrEqual(BATCHES_BEFORE_READY / SESSIONS.length);
    for (const p of ofRound) expect(batches.get(`${round}/${p.batch}`)).toEqual(Array.from({ length: p.size }, (_, i) => i));
  }
}

describe("a journal whose writer was killed mid-write", () => {
  it("re-opens consistent, with contiguous seqs and whole transactions, round after round", async () => {
    const path = files.path();
    for (let round = 1; round <= 2; round++) {
      await writeThenKill(path, round);

      expect(files.raw(path).pragma("integrity_check", { simple: true })).toBe("ok");
      const store = files.open(path);
      SESSIONS.forEach((id, index) => {
        const events = [...store.events.replay(id)];
        expect(store.events.lastSeq(id)).toBe(events.length);
        expectConsistentJournal(events, index, round);
      });
      const next = store.events.lastSeq("s1") + 1;
      expect(store.events.append("s1", "update", { round: 0, batch: 0, index: 0, size: 1 }, 0)).toBe(next);
      store.close();
    }
  });
});
