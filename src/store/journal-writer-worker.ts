// The journal writer's thread: appends the batches the host numbered, on its own connection,
// so a burst of SQLite work never stalls the event loop that relays agents' streams.
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "./database.js";
import { EventJournal, type SequencedEvent } from "./events.js";

const { path, progress } = workerData as { path: string; progress: SharedArrayBuffer };
const written = new Int32Array(progress);
const db = openDatabase(path);
const journal = new EventJournal(db);

/** A batch to append, or `"close"`: the host is stopping (the connection is closed cleanly, checkpointing its WAL). */
parentPort!.on("message", (message: SequencedEvent[] | "close") => {
  if (message === "close") {
    db.close();
    parentPort!.close();
    return;
  }
  const batch = message;
  try {
    journal.appendSequenced(batch);
  } catch (error) {
    const sessionIds = [...new Set(batch.map((event) => event.sessionId))];
    parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error), events: batch.length, sessionIds });
  } finally {
    Atomics.add(written, 0, 1);
    Atomics.notify(written, 0);
  }
});
