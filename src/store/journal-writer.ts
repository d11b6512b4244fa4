import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import type { BatchResult, WriteValue } from "./write-batch.js";

/** Resolves from both `src/store` and `dist/store`: the worker always runs compiled. */
const workerFile = new URL("../../dist/store/journal-writer-worker.js", import.meta.url);
const SYNC_TIMEOUT_MS = 30_000;

/** A batch's fate, reported once it is committed (or failed), in the order batches were written. */
export interface BatchOutcome extends BatchResult {
  /** 1, 2, 3... in the order of `write`. */
  readonly batch: number;
}

/**
 * The host's one writer: batches (see `write-batch.ts`) are committed in order on a worker
 * thread with its own connection. `write` returns at once; each batch's outcome comes back
 * through `onCommitted`, in order, after its transaction committed. `sync` blocks until every
 * batch written so far is committed and its outcome delivered.
 * `threaded` → `inline` if the thread dies (batches are then applied on the caller's thread by
 * `applyInline`, nothing later is lost but speed) → `stopped` once closed.
 */
export class JournalWriter {
  private readonly worker: Worker;
  private readonly acks: MessagePort;
  /** [0]: batches the worker has finished (their outcomes were posted first). */
  private readonly written = new Int32Array(new SharedArrayBuffer(4));
  private posted = 0;
  private delivered = 0;
  private state: "threaded" | "inline" | "stopped" = "threaded";

  constructor(
    path: string,
    private readonly onCommitted: (outcome: BatchOutcome) => void,
    /** Applies a batch on the caller's thread, if the worker is gone. */
    private readonly applyInline: (values: readonly WriteValue[]) => BatchResult,
    private readonly onThreadLost: (error: string) => void = () => undefined,
  ) {
    const channel = new MessageChannel();
    this.acks = channel.port1;
    this.worker = new Worker(workerFile, {
      // Not the host's own flags: under `node -e SCRIPT` the thread would run SCRIPT instead of the writer.
      execArgv: [],
      workerData: { path, progress: this.written.buffer, acks: channel.port2 },
      transferList: [channel.port2],
    });
    this.acks.on("message", (outcome: BatchOutcome) => this.deliver(outcome));
    const died = (error: unknown) => {
      if (this.state !== "threaded") return;
      this.state = "inline";
      this.collect();
      // Batches posted to the dead thread and not committed are lost: reported as failed, never as stored.
      const reason = `journal writer thread stopped (${error instanceof Error ? error.message : String(error)})`;
      for (let batch = this.delivered + 1; batch <= this.posted; batch++) this.deliver({ batch, failed: [{ unit: -1, error: reason }] });
      Atomics.store(this.written, 0, this.posted);
      this.onThreadLost(`${reason}; writing on the main thread`);
    };
    this.worker.on("error", died);
    this.worker.on("exit", (code) => died(`exit code ${code}`));
  }

  /** Queues a batch; returns its number. */
  write(values: WriteValue[]): number {
    if (this.state === "stopped") throw new Error("the journal writer is stopped");
    const batch = ++this.posted;
    if (this.state === "inline") {
      let result: BatchResult;
      try {
        result = this.applyInline(values);
      } catch (error) {
        result = { failed: [{ unit: -1, error: error instanceof Error ? error.message : String(error) }] };
      }
      Atomics.store(this.written, 0, batch);
      this.deliver({ batch, ...result });
      return batch;
    }
    this.worker.postMessage(values);
    return batch;
  }

  /** Batches written so far. */
  get last(): number {
    return this.posted;
  }

  /** Batches committed and delivered. */
  get committed(): number {
    return this.delivered;
  }

  /** Blocks until batch `upTo` (default: every batch written so far) is committed and its outcome delivered. */
  sync(upTo = this.posted): void {
    for (;;) {
      this.collect();
      if (this.delivered >= upTo) return;
      const done = Atomics.load(this.written, 0);
      if (done > this.delivered) continue;
      if (Atomics.wait(this.written, 0, done, SYNC_TIMEOUT_MS) === "timed-out") {
        throw new Error(`the journal writer did not finish within ${SYNC_TIMEOUT_MS} ms`);
      }
    }
  }

  async close(): Promise<void> {
    if (this.state === "stopped") return;
    if (this.state === "inline") {
      this.state = "stopped";
      this.acks.close();
      return;
    }
    this.sync();
    this.state = "stopped";
    const exited = new Promise((resolve) => this.worker.once("exit", resolve));
    this.worker.postMessage("close");
    await exited;
    this.acks.close();
  }

  /** Takes every outcome already posted, without waiting for the event loop. */
  private collect(): void {
    for (let message = receiveMessageOnPort(this.acks); message; message = receiveMessageOnPort(this.acks)) {
      this.deliver(message.message as BatchOutcome);
    }
  }

  private deliver(outcome: BatchOutcome): void {
    if (outcome.batch <= this.delivered) return;
    this.delivered = outcome.batch;
    this.onCommitted(outcome);
  }
}
