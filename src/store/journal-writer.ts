import { Worker } from "node:worker_threads";
import type { SequencedEvent } from "./events.js";

/** Resolves from both `src/store` and `dist/store`: the worker always runs compiled. */
const workerFile = new URL("../../dist/store/journal-writer-worker.js", import.meta.url);
const SYNC_TIMEOUT_MS = 30_000;

export interface JournalWriteFailure {
  readonly error: string;
  readonly events: number;
  readonly sessionIds: readonly string[];
}

/**
 * Appends pre-sequenced journal batches on a worker thread. `write` returns at once;
 * `sync` blocks until every batch written so far is stored (or failed), so reads see them.
 * `threaded` → `inline` if the thread dies (batches are then written on the caller's thread,
 * nothing is lost but speed) → `stopped` once closed.
 */
export class JournalWriter {
  private readonly worker: Worker;
  /** [0]: batches the worker has finished. */
  private readonly written = new Int32Array(new SharedArrayBuffer(4));
  private posted = 0;
  private state: "threaded" | "inline" | "stopped" = "threaded";

  constructor(
    path: string,
    private readonly onFailure: (failure: JournalWriteFailure) => void,
    /** Writes a batch on the caller's thread, if the worker is gone. */
    private readonly writeInline: (batch: readonly SequencedEvent[]) => void,
  ) {
    this.worker = new Worker(workerFile, { workerData: { path, progress: this.written.buffer } });
    this.worker.on("message", (failure: JournalWriteFailure) => onFailure(failure));
    const died = (error: unknown) => {
      if (this.state !== "threaded") return;
      this.state = "inline";
      // Batches posted to the dead thread are lost; release anyone waiting in `sync` for them.
      const lost = this.posted - Atomics.load(this.written, 0);
      Atomics.store(this.written, 0, this.posted);
      onFailure({ error: `journal writer thread stopped (${error instanceof Error ? error.message : String(error)}); writing on the main thread`, events: lost, sessionIds: [] });
    };
    this.worker.on("error", died);
    this.worker.on("exit", (code) => died(`exit code ${code}`));
  }

  write(batch: readonly SequencedEvent[]): void {
    if (this.state === "stopped") throw new Error("the journal writer is stopped");
    if (this.state === "inline") {
      try {
        this.writeInline(batch);
      } catch (error) {
        this.onFailure({ error: error instanceof Error ? error.message : String(error), events: batch.length, sessionIds: [...new Set(batch.map((e) => e.sessionId))] });
      }
      return;
    }
    this.posted++;
    this.worker.postMessage(batch);
  }

  /** Blocks until everything written so far is stored. */
  sync(): void {
    for (;;) {
      const done = Atomics.load(this.written, 0);
      if (done >= this.posted) return;
      if (Atomics.wait(this.written, 0, done, SYNC_TIMEOUT_MS) === "timed-out") {
        throw new Error(`the journal writer did not finish within ${SYNC_TIMEOUT_MS} ms`);
      }
    }
  }

  async close(): Promise<void> {
    if (this.state === "stopped") return;
    if (this.state === "inline") {
      this.state = "stopped";
      return;
    }
    this.sync();
    this.state = "stopped";
    const exited = new Promise((resolve) => this.worker.once("exit", resolve));
    this.worker.postMessage("close");
    await exited;
  }
}
