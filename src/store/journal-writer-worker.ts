// The host's one writer: applies the batches the main thread queued, in order, on its own
// connection, so SQLite work never runs on (or waits in) the event loop that relays agents'
// streams. Each batch's outcome is posted before the progress counter moves, so a main thread
// that waits on the counter can take the outcome at once.
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { openDatabase } from "./database.js";
import { BatchApplier, type BatchResult, type WriteValue } from "./write-batch.js";

const { path, progress, acks } = workerData as { path: string; progress: SharedArrayBuffer; acks: MessagePort };
const written = new Int32Array(progress);
const db = openDatabase(path);
const applier = new BatchApplier(db);
let batch = 0;

/** A batch, or `"close"`: the host is stopping (the connection is closed cleanly, checkpointing its WAL). */
parentPort!.on("message", (message: WriteValue[] | "close") => {
  if (message === "close") {
    db.close();
    acks.close();
    parentPort!.close();
    return;
  }
  batch++;
  let failed: BatchResult["failed"];
  try {
    failed = applier.apply(message).failed;
  } catch (error) {
    failed = [{ unit: -1, error: error instanceof Error ? error.message : String(error) }];
  }
  acks.postMessage({ batch, failed });
  Atomics.store(written, 0, batch);
  Atomics.notify(written, 0);
});
