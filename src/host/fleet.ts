import { hostname } from "node:os";
import { dataPaths } from "../config/paths.js";
import type { Config } from "../config/config-schema.js";
import { monotonicClock, type Clock, type Timer } from "../lifecycle/clock.js";
import { openReads, type HostStore } from "../store/host-store.js";
import { buildMirror } from "../store/postgres/fleet-mirror.js";
import { FleetWriter } from "../store/postgres/fleet-writer.js";
import { PostgresBackend } from "../store/postgres/postgres-backend.js";
import { StoreNotFoundError } from "../store/errors.js";
import { LeaseHeldError, StaleEpochError, type HostInfo, type Lease, type StoreBackend } from "../store/store-backend.js";
import { journalAbandoned } from "./abandoned-turns.js";
import { ensureDefaultIdFree } from "./default-host-id.js";
import { FleetDirectory, type PeerSession } from "./fleet-directory.js";
import { HeartbeatHealth } from "./heartbeat-health.js";
import { directoryRefusal, OwnedByOtherHostError, refusalFor } from "./owned-elsewhere.js";
import { SessionNotFoundError } from "./agent-children.js";
import type { HostParts } from "./host-composition.js";
import type { Logger } from "./logger.js";
import { StoreUnavailableError } from "./store-health.js";
import { stopSessionAgent } from "./session-deletion.js";

/** Why a session stopped being this host's. */
interface Loss {
  readonly owner: string | null;
  readonly epoch: number | null;
}

/**
 * This host as a member of a fleet on a shared PostgreSQL store (docs/fleet.md): its
 * registration (a new incarnation of its id, which fences whatever an earlier process under the
 * id still holds), its mirror, its writer, its heartbeat, and what it does when a session's
 * lease turns out to be someone else's: it stops that session's agent and forgets the session.
 *
 * `open` → `start(parts)` (heartbeats) → `close()` (after the journal is closed).
 */
export class Fleet {
  private writer: FleetWriter | undefined;
  private parts: HostParts | undefined;
  private timer: Timer | undefined;
  private beating: Promise<void> | undefined;
  private readonly losing = new Set<string>();
  /** Leases this host does not run being given up, by session: the heartbeat does not wait for them (one may wait on the session's row). */
  private readonly givingUp = new Map<string, Promise<void>>();
  /** Adoptions under way (a session taken back after a fence included), by session: one at a time per session on this host. */
  private readonly adopting = new Map<string, Promise<boolean>>();
  /** Sessions this host gave up while cut off from the store (`fence`): taken back once heartbeats get through, if still its lease. */
  private readonly givenUp = new Set<string>();
  private closing: Promise<void> | undefined;
  /**
   * When the last heartbeat that succeeded was sent (registering counts), on the monotonic clock: the database took it
   * at that moment or later, so past `fenceAfterMs` from it this host may have lost everything.
   */
  private lastBeat: number;
  /** Whether heartbeats get through, for `/healthz`. */
  readonly heartbeats = new HeartbeatHealth();
  /** `connected` → `fenced` (no heartbeat within `fenceAfterMs`: every lease given up) → `connected` at the next heartbeat. */
  private link: "connected" | "fenced" = "connected";

  private constructor(
    private readonly backend: StoreBackend,
    readonly host: HostInfo,
    private readonly leases: readonly Lease[],
    private readonly mirrorPath: string,
    /** The other hosts' sessions, questions and records, shown beside this host's own. */
    readonly directory: FleetDirectory,
    private readonly heartbeatMs: number,
    private readonly hostTtlMs: number,
    /** `fleet.adopt`: this host adopts the sessions of offline hosts it can see the directory of. */
    private readonly adoptOffline: boolean,
    private readonly log: Logger,
    /** Monotonic: the heartbeat's deadline must not move with the wall clock. */
    private readonly clock: Clock,
    registeredAt: number,
  ) {
    this.lastBeat = registeredAt;
  }

  /** One heartbeat interval before the TTL (at least half of it): this host stops its agents before another host may take their sessions. */
  private get fenceAfterMs(): number {
    return Math.max(this.hostTtlMs - this.heartbeatMs, this.hostTtlMs / 2);
  }

  /** Connects, registers this host and builds its mirror from the shared store. `clock`: monotonic, for the heartbeat's deadline. */
  static async open(config: Config, dataDir: string, log: Logger, clock: Clock = monotonicClock): Promise<Fleet> {
    const backend = await PostgresBackend.open(config.store, { hostTtlMs: config.fleet.hostTtl });
    try {
      const id = config.fleet.hostId ?? hostname();
      if (config.fleet.hostId === undefined) await ensureDefaultIdFree(backend, id, log);
      const registeredAt = clock.now();
      const host = await backend.registerHost({ id, url: config.fleet.url ?? null });
      const leases = await backend.listLeases(host.id);
      const mirrorPath = dataPaths(dataDir).fleetMirror;
      await buildMirror(backend, host.id, mirrorPath, leases, Object.keys(config.agents).concat("demo"));
      let fleet: Fleet | undefined;
      const directory = await FleetDirectory.open(
        backend,
        host.id,
        (sessionId) => fleet?.runs(sessionId) ?? leases.some((lease) => lease.sessionId === sessionId),
        config.fleet.heartbeatInterval,
        log,
      );
      log.info(
        { store: "postgres", hostId: host.id, incarnation: host.incarnation, url: host.url, sessions: leases.length },
        "registered in the fleet: this host's sessions are at new epochs, so an earlier process under its id can write nothing",
      );
      fleet = new Fleet(
        backend,
        host,
        leases,
        mirrorPath,
        directory,
        config.fleet.heartbeatInterval,
        config.fleet.hostTtl,
        config.fleet.adopt,
        log,
        clock,
        registeredAt,
      );
      return fleet;
    } catch (error) {
      await backend.close();
      throw error;
    }
  }

  /** What the host persists through (the seam it shares with SQLite): its mirror's reads, and its one writer, through the shared store, then the mirror. */
  hostStore(): HostStore {
    return {
      reads: openReads(this.mirrorPath),
      writer: (listeners) => {
        this.writer = new FleetWriter(this.backend, this.host.id, this.mirrorPath, this.leases, {
          ...listeners,
          lost: (sessionId, error) => void this.lose(sessionId, { owner: error.current.hostId, epoch: error.current.epoch }),
        });
        return this.writer;
      },
    };
  }

  /** Whether this host writes the session (its lease in hand, or being created); undefined until its writer exists. */
  runs(sessionId: string): boolean | undefined {
    return this.writer?.writes(sessionId);
  }

  /** Starts heartbeating; from now on a lost session's agent is stopped. */
  start(parts: HostParts): void {
    this.parts = parts;
    // Another host's session changed: the views read it again (the event stream's `session`).
    this.directory.changed.add((sessionId) => parts.sessionChanges.emit(sessionId));
    const tick = () => {
      this.timer = this.clock.setTimeout(() => {
        this.tick();
        tick();
      }, this.heartbeatMs);
    };
    tick();
  }

  /**
   * A heartbeat first: this host gives up its sessions only if heartbeats fail past the deadline, never when the
   * database is back by the time it looks. One still waiting on the database at the next tick counts as failed.
   */
  private tick(): void {
    if (this.closing) return;
    if (!this.beating) {
      this.beating = this.beat().finally(() => (this.beating = undefined));
      return;
    }
    this.heartbeats.failed(`a heartbeat has waited on the shared store for more than fleet.heartbeatInterval (${this.heartbeatMs} ms)`);
    this.fenceIfCutOff();
  }

  /** Gives up every session if no heartbeat got through for most of the TTL (once: until one gets through again). */
  private fenceIfCutOff(): void {
    if (this.link === "connected" && this.cutOff()) this.fence();
  }

  /**
   * Makes another host's session this host's own if its owner is offline (docs/fleet.md, "Adoption"): true once it is
   * adopted; false if it is no peer's (this host's own, or unknown: the caller's next step says which). Throws
   * {@link OwnedByOtherHostError} saying why it is not run here: its owner is online, adoption is off, its directory or
   * its agent is not here, or another host adopted it first. One adoption per session at a time; a second caller shares it.
   */
  adopt(sessionId: string): Promise<boolean> {
    let adoption = this.adopting.get(sessionId);
    if (!adoption) {
      adoption = this.takeOver(sessionId).finally(() => this.adopting.delete(sessionId));
      this.adopting.set(sessionId, adoption);
    }
    return adoption;
  }

  /** The adoption of a peer's session, which stays listed as it was (the offline owner's) until this host claims it. */
  private async takeOver(sessionId: string): Promise<boolean> {
    const parts = this.parts;
    const peer = this.directory.session(sessionId);
    if (!parts || !peer) return false;
    const done = this.directory.adoptionStarts(sessionId);
    try {
      return await this.adoptPeer(parts, peer);
    } finally {
      done();
    }
  }

  /**
   * The lease first (the shared store lets exactly one host take a silent owner's lease, at epoch + 1), then the session
   * and its journal copied into the mirror (meanwhile this host shows the peer's view of it and runs nothing of it); then
   * it is this host's: numbered on after its last seq, the dead owner's questions orphaned and its open turn ended (with
   * their events), `session_adopted` recorded. Its agent starts with the next hold, childless until then, and restores
   * its conversation with `session/load`.
   */
  private async adoptPeer(parts: HostParts, peer: PeerSession): Promise<boolean> {
    const sessionId = peer.session.id;
    const refusal = refusalFor(peer, this.adoptOffline);
    if (refusal.why !== "owner_offline") throw refusal;
    // Before the lease: a host that cannot start the session's agent must not take it (nor end its turn, nor orphan its questions).
    const { agent } = peer.session;
    if (!parts.registry.ids().includes(agent)) throw new OwnedByOtherHostError(sessionId, peer.owner, "agent_unknown", agent);
    const noDirectory = await directoryRefusal(peer);
    if (noDirectory) throw noDirectory;
    // A host that cannot show it is alive would take a session that any host may take from it the next moment.
    if (this.cutOff()) throw notAdopted(sessionId, "no heartbeat of this host reached the shared store within fleet.hostTtl");
    let lease: Lease;
    try {
      lease = await this.backend.acquireLease(sessionId, this.host.id);
    } catch (error) {
      // Deleted by its owner since this host last read the fleet.
      if (error instanceof StoreNotFoundError) throw new SessionNotFoundError(sessionId);
      if (!(error instanceof LeaseHeldError)) throw notAdopted(sessionId, "taking its lease", error);
      // Its owner heartbeats again, or another host adopted it first: that host runs it.
      const owner = error.owner.hostId!;
      const url = this.directory.hosts().find((host) => host.id === owner)?.url ?? null;
      throw new OwnedByOtherHostError(sessionId, { id: owner, url }, owner === peer.owner?.id ? "owner_online" : "adopted_elsewhere");
    }
    const { lost } = parts;
    // Not this host's own, no agent started until the copy is whole: nothing is numbered from half a journal.
    lost.add(sessionId);
    let fromGroups = 0;
    try {
      // What the owner may still run (paused, or cut off: the lease fences its writes, not its processes): told the operator.
      fromGroups = peer.owner ? (await this.backend.listGroups(peer.owner.id)).length : 0;
      await this.copy(lease);
    } catch (error) {
      // The lease is given up (anyone may take it), so the session is not left owned by a host that does not run it.
      await this.giveUp(lease, "its adoption failed");
      throw notAdopted(sessionId, "copying it from the shared store", error);
    } finally {
      lost.delete(sessionId);
    }
    // The heartbeats stopped during the copy (`fence` gave up only the leases the writer held before): given up too.
    if (this.cutOff()) {
      await this.lose(sessionId, { owner: null, epoch: null });
      throw notAdopted(sessionId, "no heartbeat of this host reached the shared store during the copy, so it gave the session up");
    }
    await this.takeUp(parts, lease, peer.owner?.id ?? null, fromGroups, "adopted a session whose host is offline");
    return true;
  }

  /**
   * Takes back a session this host gave up while cut off from the shared store (`fence`), whose lease still names it,
   * whatever `fleet.adopt` says (it is this host's own): at a new epoch, so that nothing still on its way under the old
   * one is stored; copied into the mirror again; its open turn ended and its questions orphaned, as after an adoption.
   * Another host's now, or deleted: left alone. Any other failure is logged, and the next heartbeat tries again.
   */
  private async reclaim(lease: Lease): Promise<boolean> {
    const parts = this.parts!;
    const { sessionId } = lease;
    const done = this.directory.adoptionStarts(sessionId);
    try {
      const taken = await this.backend.acquireLease(sessionId, this.host.id);
      await this.copy(taken);
      parts.lost.delete(sessionId);
      this.givenUp.delete(sessionId);
      await this.takeUp(parts, taken, this.host.id, 0, "took back a session this host gave up while cut off from the shared store");
      return true;
    } catch (error) {
      if (error instanceof LeaseHeldError || error instanceof StoreNotFoundError || error instanceof SessionNotFoundError) {
        this.givenUp.delete(sessionId);
        this.log.info({ sessionId, err: error }, "a session this host gave up while cut off is another host's now, or deleted: not taken back");
        return false;
      }
      this.log.error(
        { err: error, sessionId },
        "could not take back a session this host gave up while cut off from the shared store: tried again at the next heartbeat",
      );
      return false;
    } finally {
      done();
    }
  }

  /** The session and its journal copied from the shared store into the mirror, to be written under `lease` from then on. */
  private async copy(lease: Lease): Promise<void> {
    const session = await this.backend.getSession(lease.sessionId);
    if (!session) throw new SessionNotFoundError(lease.sessionId);
    // Writes of the session queued before (under a lease since lost) reach the writer first, and are refused there.
    this.parts?.journal.handQueued();
    await this.writer!.adopt(lease, session);
  }

  /**
   * A session copied under `lease` is this host's own from now on: numbered on after its last seq, the questions of
   * whoever ran it before orphaned and its open turn ended (with their events), `session_adopted` recorded (`from` the
   * host that ran it). A client that opens it next replays them: they are committed first.
   */
  private async takeUp(parts: HostParts, lease: Lease, from: string | null, fromGroups: number, message: string): Promise<void> {
    const { journal, records, store, clock, log } = parts;
    const { sessionId } = lease;
    journal.forget(sessionId);
    parts.children.forget(sessionId);
    this.directory.claim(sessionId);
    const events = store.events.lastSeq(sessionId);
    records.record({ kind: "session_adopted", sessionId, from, epoch: lease.epoch, events, fromGroups });
    journalAbandoned(store, journal, sessionId, store.questions.listPending(sessionId), clock.now(), "adoption");
    log.info({ sessionId, from, epoch: lease.epoch, events, fromGroups }, message);
    await journal.within(journal.committed(), "the adopted session's orphaned questions", "they are written once the store writes again");
  }

  /** Stops heartbeating and disconnects; the journal (its writer) is closed before. Leases stand until the host TTL passes. */
  close(): Promise<void> {
    this.timer?.cancel();
    this.closing ??= Promise.all([this.beating, ...this.givingUp.values(), this.directory.close()]).then(() => this.backend.close());
    return this.closing;
  }

  /** No heartbeat got through for most of the TTL (whether or not the timer noticed yet): another host may take this host's sessions any moment. */
  private cutOff(): boolean {
    return this.clock.now() - this.lastBeat > this.fenceAfterMs;
  }

  /** No heartbeat got through for most of the TTL: another host may take this host's sessions any moment, so their agents stop now. */
  private fence(): void {
    this.link = "fenced";
    const held = this.writer!.heldLeases();
    this.log.error(
      { hostId: this.host.id, sinceLastHeartbeatMs: Math.round(this.clock.now() - this.lastBeat), hostTtlMs: this.hostTtlMs, sessions: held.length },
      "no heartbeat reached the shared store within the host TTL: this host gives up its sessions and stops their agents",
    );
    for (const lease of held) {
      this.givenUp.add(lease.sessionId);
      void this.lose(lease.sessionId, { owner: null, epoch: null });
    }
  }

  /** Renews this host's heartbeat, then compares the leases it writes under with the shared store's: any other is lost. */
  private async beat(): Promise<void> {
    const writer = this.writer!;
    const sentAt = this.clock.now();
    try {
      if (!(await this.backend.heartbeat(this.host.id))) {
        this.heartbeats.failed("a later process registered under this host id: this one can write nothing more");
        this.log.error(
          { hostId: this.host.id, incarnation: this.host.incarnation },
          "a later process registered under this host id: this one can write nothing more and stops its agents",
        );
        for (const lease of writer.heldLeases()) void this.lose(lease.sessionId, { owner: this.host.id, epoch: null });
        return;
      }
      this.lastBeat = sentAt;
      this.link = "connected";
      this.heartbeats.succeeded();
      const listed = await this.backend.listLeases(this.host.id);
      const current = new Map(listed.map((lease) => [lease.sessionId, lease]));
      for (const lease of writer.heldLeases()) {
        const now = current.get(lease.sessionId);
        if (now?.epoch === lease.epoch) continue;
        const fresh = await this.backend.getLease(lease.sessionId);
        // Deleted here meanwhile (the writer let it go), or still ours after all: nothing is lost.
        if (!writer.heldLeases().includes(lease) || (fresh?.hostId === this.host.id && fresh.epoch === lease.epoch)) continue;
        void this.lose(lease.sessionId, { owner: fresh?.hostId ?? null, epoch: fresh?.epoch ?? null });
      }
      // The store names this host as the owner of sessions it does not run: sessions given up while fenced, taken back
      // (with `fleet.adopt` off no other host would ever run them); an adoption whose copy and giving up both failed (the
      // connection dropped), given up so that any host may adopt it. Neither awaited: one waiting on the session's row
      // must not hold back the heartbeats (the host would fence itself).
      for (const lease of listed) {
        const { sessionId } = lease;
        const inHand = writer.writes(sessionId) || this.adopting.has(sessionId) || this.losing.has(sessionId) || this.givingUp.has(sessionId);
        if (inHand) continue;
        if (this.givenUp.has(sessionId)) {
          this.adopting.set(
            sessionId,
            this.reclaim(lease).finally(() => this.adopting.delete(sessionId)),
          );
          continue;
        }
        this.givingUp.set(
          sessionId,
          this.giveUp(lease, "this host does not run it").finally(() => this.givingUp.delete(sessionId)),
        );
      }
    } catch (error) {
      // The heartbeat itself failed (not the reads after it, when `lastBeat` is already this one's).
      if (this.lastBeat !== sentAt) this.heartbeats.failed(`the heartbeat failed: ${error instanceof Error ? error.message : String(error)}`);
      this.log.warn({ err: error, hostId: this.host.id }, "heartbeat failed; leases stand until the host TTL passes without one");
      this.fenceIfCutOff();
    }
  }

  /**
   * Gives up a lease of a session this host does not run; a failure is logged (the next heartbeat tries again), never
   * thrown. A lease that moved on meanwhile (this host adopted the session at a new epoch, another host took it, it was
   * deleted) is left as it is: there is nothing to give up.
   */
  private async giveUp(lease: Lease, why: string): Promise<void> {
    const { sessionId, epoch } = lease;
    try {
      await this.backend.giveUpLease(lease);
      this.log.warn({ sessionId, epoch, why }, "released the lease of a session this host does not run: any host may adopt it");
    } catch (error) {
      if (error instanceof StaleEpochError || error instanceof StoreNotFoundError) {
        const current = error instanceof StaleEpochError ? error.current : null;
        this.log.info(
          { sessionId, epoch, why, owner: current?.hostId ?? null, currentEpoch: current?.epoch ?? null },
          "the lease of a session this host does not run moved on before its release: nothing to release",
        );
        return;
      }
      this.log.error(
        { err: error, sessionId, epoch, why },
        "could not release the lease of a session this host does not run: tried again at the next heartbeat",
      );
    }
  }

  /**
   * Another host owns the session now (or may, any moment): nothing more of it is written here, it is not found or
   * shown from now on and no agent is started for it (`lost`), its agent is stopped, `session_lost` tells the views,
   * and this host forgets it; it is deleted from its mirror last, after what is queued for the database.
   */
  private async lose(sessionId: string, loss: Loss): Promise<void> {
    const writer = this.writer!;
    writer.forget(sessionId);
    if (this.losing.has(sessionId)) return;
    this.losing.add(sessionId);
    const parts = this.parts;
    try {
      if (!parts) {
        this.log.warn({ sessionId, ...loss }, "session lost to another host while this host was starting");
      } else {
        const { children, journal, records, lost } = parts;
        lost.add(sessionId);
        await stopSessionAgent(parts, sessionId, "lost");
        records.record({ kind: "session_lost", sessionId, owner: loss.owner, epoch: loss.epoch });
        journal.forget(sessionId);
        children.forget(sessionId);
      }
      await writer.deleteFromMirror(sessionId);
    } catch (error) {
      this.log.error({ err: error, sessionId }, "stopping a lost session's agent failed");
    } finally {
      this.losing.delete(sessionId);
    }
  }
}

/**
 * Why an adoption failed, for the client: what says why the session is not run here (not found, another host's, the
 * store unavailable) as it is; anything else (the database's errors, a superseded incarnation, the mirror) as the store
 * being unavailable for now (503 `store_unavailable`), naming the step.
 */
function notAdopted(sessionId: string, step: string, error?: unknown): Error {
  if (error instanceof SessionNotFoundError || error instanceof OwnedByOtherHostError || error instanceof StoreUnavailableError) return error;
  if (error === undefined) return new StoreUnavailableError(`session "${sessionId}" was not adopted: ${step}`);
  const cause = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`session "${sessionId}" was not adopted: ${step}: ${cause}`, { cause: error });
}
