import { JournalWriter, type BatchWriter, type WriterListeners } from "./journal-writer.js";
import { Store } from "./store.js";

/**
 * The seam both backends meet under the host: the batch writer plus the local reads. The host reads a local
 * SQLite file synchronously and writes only through its one writer, which commits the host's flat batches
 * (`write-batch.ts`) in order and reports each once it is stored:
 *
 * - SQLite (the embedded default): the data directory's file, and the writer thread applying each batch with
 *   `BatchApplier` on its own connection ({@link sqliteHostStore});
 * - a fleet on PostgreSQL: this host's mirror, and the fleet writer storing each batch in the shared store under
 *   this host's leases, then in the mirror with that same writer thread (`src/host/fleet.ts`).
 *
 * `StoreBackend` (`store-backend.ts`) is the asynchronous interface underneath: the fleet writer and the mirror
 * use it; the contract suite checks both of its backends, SQLite's through the same `BatchApplier`.
 */
export interface HostStore {
  /** The synchronous reads, on a file only this host's writer writes. */
  readonly reads: Store;
  /** The host's one writer; `listeners` hear each batch's outcome, in order. Called once. */
  writer(listeners: WriterListeners): BatchWriter;
}

/** The embedded default: the data directory's file, read here and written by the writer thread. */
export function sqliteHostStore(path: string): HostStore {
  return { reads: openReads(path), writer: (listeners) => new JournalWriter(path, listeners) };
}

/**
 * The reads of a host store, on `path`: only read on this thread (the writer thread writes), so a read never waits,
 * and a write here would fail at once rather than wait.
 */
export function openReads(path: string): Store {
  return Store.open(path, { busyTimeoutMs: 0 });
}
