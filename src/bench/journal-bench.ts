import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Store } from "../store/store.js";

const SINGLE_APPENDS = 20_000;
const REPLAY_EVENTS = 100_000;
const BATCH_SIZE = 100;

// Shaped like an ACP agent_message_chunk update, the journal's most common event.
const payload = {
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text: "Reading src/parser.ts to find where the tokenizer loses the position. " },
};

interface Row {
  measure: string;
  events: number;
  ms: number;
}

/** Journal append and replay rates on a real temp file (WAL, synchronous NORMAL), printed as a table. */
export async function runJournalBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "berth-journal-bench-"));
  const store = Store.open(join(dir, "bench.db"));
  try {
    const rows: Row[] = [];
    const createdAt = Date.now();
    store.sessions.create({ id: "single", agent: "bench", cwd: dir, createdAt });
    store.sessions.create({ id: "batched", agent: "bench", cwd: dir, createdAt });

    rows.push(
      measure("append, one transaction each", SINGLE_APPENDS, () => {
        for (let i = 0; i < SINGLE_APPENDS; i++) store.events.append("single", "update", payload, Date.now());
      }),
    );
    // The host's path: events it already numbered, one transaction per batch (a turn of the event loop, or more).
    rows.push(
      measure(`append pre-sequenced, batches of ${BATCH_SIZE}`, REPLAY_EVENTS, () => {
        let seq = 0;
        for (let done = 0; done < REPLAY_EVENTS; done += BATCH_SIZE) {
          const at = Date.now();
          store.events.appendSequenced(Array.from({ length: BATCH_SIZE }, () => ({ sessionId: "batched", seq: ++seq, kind: "update", payload, at })));
        }
      }),
    );
    rows.push(
      measure(`replay one session of ${REPLAY_EVENTS.toLocaleString("en")} events`, REPLAY_EVENTS, () => {
        let replayed = 0;
        for (const _event of store.events.replay("batched")) replayed++;
        if (replayed !== REPLAY_EVENTS) throw new Error(`replayed ${replayed} events, expected ${REPLAY_EVENTS}`);
      }),
    );
    print(rows);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function measure(name: string, events: number, work: () => void): Row {
  const start = performance.now();
  work();
  return { measure: name, events, ms: performance.now() - start };
}

function print(rows: Row[]): void {
  const table = [
    ["journal", "events", "total ms", "events/s"],
    ...rows.map((r) => [r.measure, r.events.toLocaleString("en"), r.ms.toFixed(0), Math.round((r.events / r.ms) * 1000).toLocaleString("en")]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  // Names left-aligned, figures right-aligned.
  const align = (cell: string, column: number) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!));
  const format = (line: string[]) => line.map(align).join("  ");
  console.log(format(table[0]!));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const line of table.slice(1)) console.log(format(line));
}
