/** What a process group was started for; an agent install (`npm`, `tar`) is stopped by the install itself and never ledgered. */
export type ProcessKind = "agent" | "terminal" | "service" | "install";

/** Who a live process group is, in a form that survives pid reuse and host restarts. */
interface GroupIdentity {
  /** The process group id, which is also the group leader's pid. */
  readonly pgid: number;
  /** The leader's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`). */
  readonly startTicks: number;
  /** The boot the start ticks belong to (`/proc/sys/kernel/random/boot_id`). */
  readonly bootId: string;
}

/** A live process group the host started, as written to its ledger. */
export interface LedgerEntry extends GroupIdentity {
  readonly kind: ProcessKind;
  /** Human-readable, for log lines: the command, the agent name, the service name. */
  readonly label: string;
  /** Milliseconds since the epoch. */
  readonly startedAt: number;
}

/**
 * Where the host writes down each live process group, so a later run can reap
 * the groups this run leaves behind if it dies. `delete` of an unknown pgid is a no-op.
 */
export interface ProcessGroupLedger {
  add(group: LedgerEntry): void;
  delete(pgid: number): void;
  list(): LedgerEntry[];
}

/** A ledger that lives as long as the host process; for tests and for hosts without a store. */
export class InMemoryProcessGroupLedger implements ProcessGroupLedger {
  private readonly groups = new Map<number, LedgerEntry>();

  add(group: LedgerEntry): void {
    this.groups.set(group.pgid, group);
  }

  delete(pgid: number): void {
    this.groups.delete(pgid);
  }

  list(): LedgerEntry[] {
    return [...this.groups.values()];
  }
}
