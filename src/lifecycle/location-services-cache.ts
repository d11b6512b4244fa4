import { deferred } from "./deferred.js";
import { describeLocation, type LocationKey } from "./location-key.js";

/** Why a location's services are closed: its idle TTL ran out, the cap was reached, or the host is stopping. */
export type CloseReason = "idle" | "inactivity" | "shutdown";

/** The cache was closed (host shutdown): it boots nothing any more. */
export class LocationServicesClosedError extends Error {
  override readonly name = "LocationServicesClosedError";
  constructor(readonly key: LocationKey) {
    super(`location services are closed (the host is shutting down): ${describeLocation(key)} was not started`);
  }
}

/**
 * One stay of a location in the cache. `booting` → `ready` → `closing` → `closed`,
 * or `booting` → `failed`. A location that is booted again after eviction gets a
 * new entry, so callers compare entries, never keys.
 */
type LocationEntryState = "booting" | "ready" | "failed" | "closing" | "closed";

export interface LocationEntry<S> {
  readonly key: LocationKey;
  readonly state: LocationEntryState;
  /** The services, once `ready` (and while closing). */
  readonly services: S | undefined;
  readonly ready: Promise<S>;
}

export interface LocationServicesHooks<S> {
  /** Starts a location's services (lazily; only on first real need). */
  boot(key: LocationKey): Promise<S>;
  /** Stops them; awaited, called at most once per entry. */
  close(key: LocationKey, services: S, reason: CloseReason): Promise<void>;
}

class Entry<S> implements LocationEntry<S> {
  state: LocationEntryState = "booting";
  services: S | undefined;
  closed: Promise<void> | undefined;
  constructor(
    readonly key: LocationKey,
    readonly ready: Promise<S>,
  ) {}
}

/**
 * Get-or-boot per location key, single-flight: concurrent first users share one boot.
 * A replacement entry boots only after its predecessor has finished closing, so a
 * location never runs two sets of services at once.
 */
export class LocationServicesCache<S> {
  private readonly current = new Map<string, Entry<S>>();
  private readonly closing = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly hooks: LocationServicesHooks<S>) {}

  /** The cache entry of `key`, booting a new one if there is none. Throws {@link LocationServicesClosedError} after `closeAll()`. */
  open(key: LocationKey): LocationEntry<S> {
    if (this.closed) throw new LocationServicesClosedError(key);
    const existing = this.current.get(key.id);
    if (existing) return existing;
    const boot = deferred<S>();
    const entry = new Entry<S>(key, boot.promise);
    this.current.set(key.id, entry);
    const predecessorClosed = this.closing.get(key.id) ?? Promise.resolve();
    // The predecessor's close failure was reported to whoever evicted it; it must not block a new boot.
    void predecessorClosed
      .catch(() => undefined)
      // A boot still waiting for its predecessor when the cache closed never starts.
      .then(() => (this.closed ? Promise.reject(new LocationServicesClosedError(key)) : this.hooks.boot(key)))
      .then(
        (services) => {
          entry.services = services;
          entry.state = "ready";
          boot.resolve(services);
        },
        (error: unknown) => {
          entry.state = "failed";
          if (this.current.get(key.id) === entry) this.current.delete(key.id);
          boot.reject(error);
        },
      );
    // A failed boot is reported to whoever awaits `ready`; keep it from being "unhandled" otherwise.
    entry.ready.catch(() => undefined);
    return entry;
  }

  /** The current entry, if any. Never boots. */
  entry(key: LocationKey): LocationEntry<S> | undefined {
    return this.current.get(key.id);
  }

  /** The services of `key` if they are booted. Never boots. */
  peek(key: LocationKey): S | undefined {
    const entry = this.current.get(key.id);
    return entry?.state === "ready" ? entry.services : undefined;
  }

  entries(): LocationEntry<S>[] {
    return [...this.current.values()];
  }

  /**
   * Removes `entry` if it is still the current one for its key and closes its services,
   * exactly once. A stale entry (already replaced) never closes the replacement.
   */
  close(entry: LocationEntry<S>, reason: CloseReason): Promise<void> {
    const own = entry as Entry<S>;
    if (own.closed) return own.closed;
    if (this.current.get(own.key.id) === own) this.current.delete(own.key.id);
    own.closed = this.closeEntry(own, reason);
    this.closing.set(own.key.id, own.closed);
    const forget = () => {
      if (this.closing.get(own.key.id) === own.closed) this.closing.delete(own.key.id);
    };
    own.closed.then(forget, forget);
    return own.closed;
  }

  /** Whether `closeAll()` was called: nothing boots any more. */
  isClosed(): boolean {
    return this.closed;
  }

  /** Closes every entry (host shutdown); from now on `open` boots nothing. */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.current.values()].map((entry) => this.close(entry, "shutdown")));
    await Promise.allSettled([...this.closing.values()]);
  }

  private async closeEntry(entry: Entry<S>, reason: CloseReason): Promise<void> {
    let services: S;
    try {
      services = await entry.ready;
    } catch {
      return; // never booted: nothing to close
    }
    entry.state = "closing";
    try {
      await this.hooks.close(entry.key, services, reason);
    } finally {
      entry.state = "closed";
    }
  }
}
