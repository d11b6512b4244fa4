import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import type { BatchResult, WriteValue } from "./write-batch.js";

/** Resolves from both `src/store` and `dist/store`: the worker always runs compiled. */
const workerFile = new URL("../../dist/store/journal-writer-worker.js", import.meta.url);
/** How long one try of the writer thread waits inside SQLite for another connection's write lock. */
const LOCK_WAIT_MS = 250;
/** How long a thread told to abandon its queue may take to stop (one try, then its exit). */
const ABANDON_MS = 5_000;

/** A batch's fate, reported once it is committed (or failed), in the order batches were written. */
export interface BatchOutcome extends BatchResult {
  /** 1, 2, 3... in the order of `write`. */
  readonly batch: number;
}

/** What the writer thread says of the store as a whole, when it changes. */
export type WriterStatus =
  /** SQLite cannot write for now (`code`: `SQLITE_BUSY` for another connection's lock, `SQLITE_FULL`...); batches wait, in order. */
  | { readonly state: "blocked"; readonly since: number; readonly code: string; readonly error: string }
  /** It writes again: blocked from `since` until `at` (ms epoch). */
  | { readonly state: "writable"; readonly since: number; readonly at: number };

/** What the thread posts back: outcomes and status changes, in the order they happened. */
export type WriterMessage = BatchOutcome | WriterStatus;

export interface WriterListeners {
  readonly committed: (outcome: BatchOutcome) => void;
  readonly status?: (status: WriterStatus) => void;
  /** The thread died (a bug): what it had not committed is reported failed, and a new thread takes over. */
  readonly threadLost?: (error: string) => void;
}

/** What commits the host's batches, in order: {@link JournalWriter} (SQLite), or the fleet's writer (PostgreSQL). */
export interface BatchWriter {
  /** Queues a batch; returns its number (1, 2, 3...). Its outcome comes back through the listeners' `committed`, in order. */
  write(values: WriteValue[]): number;
  /** Batches written so far. */
  readonly last: number;
  /** Stores what is queued, waiting at most `timeoutMs`, then stops; returns how many batches were not stored (each reported failed). */
  close(timeoutMs: number): Promise<number>;
}

/**
 * The host's one writer: batches (see `write-batch.ts`) are committed in order on a worker
 * thread with its own connection. `write` returns at once; each batch's outcome comes back
 * through `committed`, in order, after its transaction committed. Nothing here ever waits on
 * the caller's thread: not for a lock, not for the thread.
 * `running` → `closing` (what is queued is stored first, for a bounded time) → `stopped`.
 */
export class JournalWriter implements BatchWriter {
  private worker!: Worker;
  private acks!: MessagePort;
  private posted = 0;
  private delivered = 0;
  private blockedSince: number | undefined;
  private state: "running" | "closing" | "stopped" = "running";

  constructor(
    private readonly path: string,
    private readonly listeners: WriterListeners,
  ) {
    this.startThread();
  }

  /** Queues a batch; returns its number. */
  write(values: WriteValue[]): number {
    if (this.state !== "running") throw new Error("the journal writer is stopped");
    const batch = ++this.posted;
    this.worker.postMessage(values);
    return batch;
  }

  /** Batches written so far. */
  get last(): number {
    return this.posted;
  }

  /** Batches committed (or failed) and delivered. */
  get committed(): number {
    return this.delivered;
  }

  /**
   * Stores what is queued, waiting at most `timeoutMs` (the store may be blocked), then stops the
   * thread. Returns how many batches were not stored (each is also reported failed).
   */
  async close(timeoutMs: number): Promise<number> {
    if (this.state !== "running") return 0;
    this.state = "closing";
    const worker = this.worker;
    let timer: NodeJS.Timeout | undefined;
    const exited = new Promise<boolean>((resolve) => worker.once("exit", () => resolve(true)));
    worker.postMessage("close");
    const bounded = (ms: number) => Promise.race([exited, new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)))]);
    let finished = await bounded(timeoutMs);
    clearTimeout(timer);
    if (!finished) {
      // Told between two tries, the thread stops cleanly: terminating it inside a SQLite call would bring the process down.
      worker.postMessage("abandon");
      finished = await bounded(ABANDON_MS);
      clearTimeout(timer);
      if (!finished) await worker.terminate();
    }
    this.collect();
    this.state = "stopped";
    this.acks.close();
    const lost = this.posted - this.delivered;
    this.failInFlight("not stored: the host stopped while the store could not write");
    return lost;
  }

  private startThread(): void {
    const channel = new MessageChannel();
    const worker = new Worker(workerFile, {
      // Not the host's own flags: under `node -e SCRIPT` the thread would run SCRIPT instead of the writer.
      execArgv: [],
      workerData: { path: this.path, first: this.posted + 1, acks: channel.port2, lockWaitMs: LOCK_WAIT_MS, blockedSince: this.blockedSince },
      transferList: [channel.port2],
    });
    this.worker = worker;
    this.acks = channel.port1;
    this.acks.on("message", (message: WriterMessage) => this.receive(message));
    const died = (error: unknown) => {
      if (this.worker !== worker || this.state !== "running") return;
      this.collect();
      this.acks.close();
      // Batches posted to the dead thread and not reported are lost: reported as failed, never as stored.
      const reason = `journal writer thread stopped (${error instanceof Error ? error.message : String(error)})`;
      this.failInFlight(reason);
      this.startThread();
      this.listeners.threadLost?.(`${reason}; a new writer thread took over`);
    };
    worker.on("error", died);
    worker.on("exit", (code) => died(`exit code ${code}`));
  }

  /** Takes every message already posted, without waiting for the event loop (the thread is gone or going). */
  private collect(): void {
    for (let message = receiveMessageOnPort(this.acks); message; message = receiveMessageOnPort(this.acks)) {
      this.receive(message.message as WriterMessage);
    }
  }

  private receive(message: WriterMessage): void {
    if ("state" in message) {
      this.blockedSince = message.state === "blocked" ? message.since : undefined;
      this.listeners.status?.(message);
      return;
    }
    if (message.batch <= this.delivered) return;
    this.delivered = message.batch;
    this.listeners.committed(message);
  }

  private failInFlight(reason: string): void {
    for (let batch = this.delivered + 1; batch <= this.posted; batch++) this.receive({ batch, failed: [{ unit: -1, error: reason }] });
  }
}
