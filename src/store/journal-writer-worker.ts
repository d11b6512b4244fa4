// The host's one writer: applies the batches the main thread queued, in order, on its own
// connection, so SQLite work never runs on (or waits in) the event loop that relays agents'
// streams. When SQLite cannot write for now (another process holds the write lock, the disk is
// full, the file is read-only), the batch at the head stays there and is tried again, later
// batches wait behind it, and the main thread is told once that the store is blocked and once
// that it writes again.
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { openDatabase, type SqliteDatabase } from "./database.js";
import type { WriterMessage } from "./journal-writer.js";
import { BatchApplier, messageOf, StoreBlockedError, type BatchResult, type WriteValue } from "./write-batch.js";

const { path, first, acks, lockWaitMs, blockedSince } = workerData as {
  path: string;
  first: number;
  acks: MessagePort;
  /** How long SQLite itself waits for another connection's lock on each try (it polls with short sleeps). */
  lockWaitMs: number;
  /** The thread before this one died while the store was blocked. */
  blockedSince: number | undefined;
};
let db: SqliteDatabase | undefined;
let applier: BatchApplier | undefined;
const queue: WriteValue[][] = [];
/** The number of the batch at the head of the queue. */
let next = first;
let closing = false;
let retry: NodeJS.Timeout | undefined;
let blocked: { since: number; code: string } | undefined = blockedSince === undefined ? undefined : { since: blockedSince, code: "" };
/** A failure that is not a lock (a full disk) comes at once: wait between tries, longer each time. */
const MIN_BACKOFF_MS = 20;
const MAX_BACKOFF_MS = 2_000;
let backoffMs = MIN_BACKOFF_MS;

const post = (message: WriterMessage) => acks.postMessage(message);

/**
 * A batch; `"close"`: the host is stopping (what is queued is stored first, then the connection is
 * closed, checkpointing its WAL); `"abandon"`: it stops now, storing nothing more (the store could
 * not write for as long as the host would wait).
 */
parentPort!.on("message", (message: WriteValue[] | "close" | "abandon") => {
  if (message === "abandon") {
    clearTimeout(retry);
    queue.length = 0;
    closing = true;
  } else if (message === "close") closing = true;
  else queue.push(message);
  // Messages are taken between tries only: a try never runs while the thread stops.
  if (retry === undefined || message === "abandon") drain();
});

function drain(): void {
  retry = undefined;
  while (queue.length > 0) {
    const startedAt = Date.now();
    let result: BatchResult;
    try {
      applier ??= open();
      result = applier.apply(queue[0]!);
    } catch (error) {
      if (error instanceof StoreBlockedError) return blockedOn(error, startedAt);
      result = { failed: [{ unit: -1, error: messageOf(error) }] };
    }
    queue.shift();
    if (blocked) {
      post({ state: "writable", since: blocked.since, at: Date.now() });
      blocked = undefined;
      backoffMs = MIN_BACKOFF_MS;
    }
    post({ batch: next++, ...result });
  }
  if (closing) {
    db?.close();
    acks.close();
    parentPort!.close();
  }
}

/** The connection, opened on first need: a file that cannot be opened yet is a store that cannot write yet. */
function open(): BatchApplier {
  try {
    db = openDatabase(path, { busyTimeoutMs: lockWaitMs });
  } catch (error) {
    throw new StoreBlockedError("SQLITE_CANTOPEN", error instanceof Error ? error.message : String(error));
  }
  return new BatchApplier(db);
}

function blockedOn(error: StoreBlockedError, startedAt: number): void {
  if (!blocked || blocked.code !== error.code) {
    blocked = { since: blocked?.since ?? startedAt, code: error.code };
    post({ state: "blocked", since: blocked.since, code: error.code, error: error.message });
  }
  // A lock was already waited for inside SQLite; anything else failed at once and is given time.
  const lock = /^SQLITE_(BUSY|LOCKED)/.test(error.code);
  retry = setTimeout(drain, lock ? 1 : backoffMs);
  if (!lock) backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
}
