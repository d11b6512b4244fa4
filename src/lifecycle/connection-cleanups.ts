/** A registered cleanup; `releaseIfCurrent` unregisters it without running it, only if no newer one replaced it. */
export interface CleanupRegistration {
  readonly id: string;
  readonly connectionId: string;
  readonly version: number;
  /** Settles once the cleanup this registration replaced (if any) has run. */
  readonly replaced: Promise<void>;
  releaseIfCurrent(): boolean;
  isCurrent(): boolean;
}

interface Entry {
  readonly registration: CleanupRegistration;
  readonly cleanup: () => void | Promise<void>;
}

/**
 * What each client connection must undo when it goes away (its holds, its subscriptions).
 * A connection registers its cleanup *before* it awaits a hold, so a socket that closes
 * mid-acquisition still releases it. Entries are fenced by version: the cleanup of an old
 * registration can never remove a newer one registered under the same id.
 */
export class ConnectionCleanups {
  private readonly byId = new Map<string, Entry>();
  private readonly byConnection = new Map<string, Set<string>>();
  private nextVersion = 1;

  constructor(private readonly onError: (error: unknown, id: string) => void = () => undefined) {}

  /**
   * Registers `cleanup` under `id`, synchronously. An existing registration for `id` is
   * replaced and its cleanup run; `registration.replaced` settles when that is done.
   */
  register(id: string, cleanup: () => void | Promise<void>, connectionId: string): CleanupRegistration {
    const previous = this.byId.get(id);
    const registration = this.newRegistration(id, connectionId, previous ? this.run(previous) : Promise.resolve());
    this.install({ registration, cleanup });
    return registration;
  }

  /** Runs every cleanup of a connection (its socket closed). */
  async cleanupForConnection(connectionId: string): Promise<void> {
    const ids = this.byConnection.get(connectionId);
    if (!ids) return;
    this.byConnection.delete(connectionId);
    // A connection's ids are exactly its current entries: `uninstall` takes an id out of both maps at once.
    const entries = [...ids].map((id) => this.byId.get(id)!);
    for (const entry of entries) this.uninstall(entry.registration);
    await Promise.all(entries.map((entry) => this.run(entry)));
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  size(): number {
    return this.byId.size;
  }

  private newRegistration(id: string, connectionId: string, replaced: Promise<void>): CleanupRegistration {
    const version = this.nextVersion++;
    const registration: CleanupRegistration = {
      id,
      connectionId,
      version,
      replaced,
      isCurrent: () => this.byId.get(id)?.registration === registration,
      releaseIfCurrent: () => {
        if (!registration.isCurrent()) return false;
        this.uninstall(registration);
        return true;
      },
    };
    return registration;
  }

  private install(entry: Entry): void {
    const { id, connectionId } = entry.registration;
    const previous = this.byId.get(id);
    if (previous) this.uninstall(previous.registration);
    this.byId.set(id, entry);
    let ids = this.byConnection.get(connectionId);
    if (!ids) this.byConnection.set(connectionId, (ids = new Set()));
    ids.add(id);
  }

  /** Only ever given the current registration of its id (every caller checks, or found it current). */
  private uninstall(registration: CleanupRegistration): void {
    this.byId.delete(registration.id);
    const ids = this.byConnection.get(registration.connectionId);
    ids?.delete(registration.id);
    if (ids?.size === 0) this.byConnection.delete(registration.connectionId);
  }

  private async run(entry: Entry): Promise<void> {
    try {
      await entry.cleanup();
    } catch (error) {
      this.onError(error, entry.registration.id);
    }
  }
}
