import { Listeners } from "../lifecycle/listeners.js";
import type { LifecycleRecord } from "../store/lifecycle-records.js";
import type { Question } from "../store/questions.js";
import type { Session } from "../store/sessions.js";
import type { HostInfo, StoreBackend, StoreChange } from "../store/store-backend.js";
import type { Logger } from "./logger.js";

/** A session another host of the fleet owns (or no host does), as this host last read it from the shared store. */
export interface PeerSession {
  readonly session: Session;
  /** Its owner; null while no host owns it (given up). */
  readonly owner: { readonly id: string; readonly url: string | null } | null;
  /** Its owner's heartbeat is within the host TTL. */
  readonly ownerOnline: boolean;
  readonly pendingQuestions: readonly Question[];
}

/** What this host knows of the rest of its fleet; nothing at all on SQLite (one host). */
export interface Peers {
  session(sessionId: string): PeerSession | undefined;
  sessions(): readonly PeerSession[];
  question(questionId: string): Question | undefined;
  /** A question as the shared store has it now, resolved ones included (which this view does not keep); undefined on SQLite. */
  storedQuestion(questionId: string): Promise<Question | undefined>;
  /** The hosts of the fleet (this one included); undefined when this host is not in a fleet. */
  hosts(): readonly HostInfo[] | undefined;
  /** Records other hosts appended since this host started, oldest first (at most {@link MAX_PEER_RECORDS}). */
  records(): readonly LifecycleRecord[];
}

export const noPeers: Peers = {
  session: () => undefined,
  sessions: () => [],
  question: () => undefined,
  storedQuestion: () => Promise.resolve(undefined),
  hosts: () => undefined,
  records: () => [],
};

const MAX_PEER_RECORDS = 1_000;
/** Notifications this close together are read in one refresh. */
const GATHER_MS = 20;

/**
 * The other hosts' sessions, pending questions and records, and the fleet's hosts, read from the
 * shared store into memory: all of it at start, every heartbeat interval (so an owner that stopped
 * heartbeating shows offline within one) and whenever changes may have gone untold (the listening
 * connection came back); in between, only the sessions `LISTEN/NOTIFY` names as changed by another
 * host, with the hosts, in two queries however many. A wake-up costs what
 * changed, not all sessions. Listeners hear which peers' sessions changed, which are gone, and which
 * records peers appended (docs/fleet.md, "One view").
 *
 * `open` → `close()`.
 */
export class FleetDirectory implements Peers {
  private byId = new Map<string, PeerSession>();
  private questionsById = new Map<string, Question>();
  private hostList: readonly HostInfo[] = [];
  /** The sessions the shared store said this host owns, at the last read: their journal writes wake nothing. */
  private own = new Set<string>();
  private readonly peerRecords: LifecycleRecord[] = [];
  /** Record ids other hosts announced and this host has not read yet. */
  private readonly announced = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private gathering: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  /** What the next refresh reads: everything, or the sessions named since the last one (and the hosts). */
  private wanted: "everything" | "changed" = "everything";
  private readonly dirty = new Set<string>();
  /** Rows read from the shared store so far: what the refreshes cost. */
  private rows = 0;
  /** Sessions this host adopted so far: a refresh that read the store before the last of them is read again. */
  private claims = 0;
  /** Sessions this host is adopting: shown as they were until claimed (or given up), whatever the store says of their lease meanwhile. */
  private readonly adopting = new Set<string>();
  private closed = false;
  private unlisten: (() => Promise<void>) | undefined;
  readonly changed = new Listeners<string>((error) => this.log.error({ err: error }, "fleet session change listener failed"));
  readonly gone = new Listeners<string>((error) => this.log.error({ err: error }, "fleet session removal listener failed"));
  /** The hosts changed: one registered, came back online or went offline, or changed its URL or incarnation. */
  readonly hostsChanged = new Listeners<void>((error) => this.log.error({ err: error }, "fleet hosts listener failed"));
  readonly recorded = new Listeners<LifecycleRecord>((error) => this.log.error({ err: error }, "fleet record listener failed"));

  private constructor(
    private readonly backend: StoreBackend,
    private readonly hostId: string,
    /** Whether this host writes the session (holds its lease in hand, or is creating it). */
    private readonly runsHere: (sessionId: string) => boolean,
    private readonly log: Logger,
  ) {}

  /** Listens for the fleet's changes, then reads the picture once; refreshes every `intervalMs` from then on. */
  static async open(
    backend: StoreBackend,
    hostId: string,
    runsHere: (sessionId: string) => boolean,
    intervalMs: number,
    log: Logger,
  ): Promise<FleetDirectory> {
    const directory = new FleetDirectory(backend, hostId, runsHere, log);
    directory.unlisten = await backend.subscribe((change) => directory.woken(change));
    await directory.refresh();
    // Each interval reads everything: an owner that stopped heartbeating shows offline, and a change no notification
    // named (made outside Berth, or told while this host's listening connection was on its way back) costs at most one.
    directory.timer = setInterval(() => {
      directory.wanted = "everything";
      directory.soon();
    }, intervalMs);
    directory.timer.unref();
    return directory;
  }

  session(sessionId: string): PeerSession | undefined {
    return this.byId.get(sessionId);
  }

  sessions(): readonly PeerSession[] {
    return [...this.byId.values()];
  }

  question(questionId: string): Question | undefined {
    return this.questionsById.get(questionId);
  }

  storedQuestion(questionId: string): Promise<Question | undefined> {
    return this.backend.getQuestion(questionId);
  }

  hosts(): readonly HostInfo[] {
    return this.hostList;
  }

  records(): readonly LifecycleRecord[] {
    return this.peerRecords;
  }

  /** Rows this directory read from the shared store since it opened. */
  rowsRead(): number {
    return this.rows;
  }

  /**
   * This host is about to take the session's lease (adoption): until it claims the session (or the returned function
   * says it gave up), the session stays listed as it was, not as this host's own while this host cannot show it yet.
   */
  adoptionStarts(sessionId: string): () => void {
    this.adopting.add(sessionId);
    return () => this.adopting.delete(sessionId);
  }

  /**
   * This host took the session's lease (adoption): it is this host's own from now on, not a peer's,
   * even for a refresh that read the store before; listeners of `gone` hear that it left the peers.
   */
  claim(sessionId: string): void {
    this.claims++;
    this.own.add(sessionId);
    const peer = this.byId.get(sessionId);
    if (!peer) return;
    this.byId.delete(sessionId);
    for (const question of peer.pendingQuestions) this.questionsById.delete(question.id);
    this.gone.emit(sessionId);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.gathering);
    await this.running;
    await this.unlisten?.().catch(() => undefined);
  }

  /** This host's own changes are already in its mirror: only other hosts' (and any change of ownership) wake the directory. */
  private woken(change: StoreChange): void {
    if (change.type === "missed") {
      this.wanted = "everything";
    } else if (change.type === "record") {
      if (change.hostId === this.hostId) return;
      this.announced.add(change.id);
    } else if (change.type !== "lease" && this.own.has(change.sessionId)) {
      return;
    } else {
      this.dirty.add(change.sessionId);
    }
    this.soon();
  }

  /** One refresh for the notifications of the next few milliseconds; one more after a refresh that was running. */
  private soon(): void {
    if (this.closed || this.gathering) return;
    this.gathering = setTimeout(() => {
      this.gathering = undefined;
      if (this.running) {
        this.again = true;
        return;
      }
      this.running = this.refreshWanted()
        .catch((error: unknown) => this.log.warn({ err: error }, "reading the fleet's sessions failed; tried again at the next change or heartbeat"))
        .finally(() => {
          this.running = undefined;
          if (this.again) {
            this.again = false;
            this.soon();
          }
        });
    }, GATHER_MS);
  }

  /** Everything when asked for (or after a refresh that failed), else the sessions named since the last one. */
  private async refreshWanted(): Promise<void> {
    const wanted = this.wanted;
    const dirty = [...this.dirty];
    this.wanted = "changed";
    this.dirty.clear();
    try {
      await (wanted === "everything" ? this.refresh() : this.refreshChanged(dirty));
    } catch (error) {
      // What it would have read may have changed meanwhile: all of it is read at the next refresh.
      this.wanted = "everything";
      throw error;
    }
  }

  private async refresh(): Promise<void> {
    const { backend } = this;
    const claims = this.claims;
    this.wanted = "changed";
    // The leases before the sessions: a session deleted between the reads is not listed, never listed as no host's (on
    // its own host, which skips the wake-ups of its own sessions, that would last until the next interval). A session
    // with no lease in that read that was not shown as no host's already may be newer than it: its lease is read again.
    const hosts = await this.read(backend.listHosts());
    const ownerOf = new Map<string, HostInfo>();
    const readLeases = async () => {
      for (const host of hosts)
        for (const lease of await this.read(backend.listLeases(host.id))) if (!ownerOf.has(lease.sessionId)) ownerOf.set(lease.sessionId, host);
    };
    await readLeases();
    const [sessions, pending] = await Promise.all([this.read(backend.listSessions()), this.read(backend.listPendingQuestions())]);
    if (sessions.some((session) => !ownerOf.has(session.id) && this.byId.get(session.id)?.owner !== null)) await readLeases();
    const records = await this.announcedRecords();
    if (this.closed) return;
    // This host adopted a session meanwhile: what was read may show it as a peer's still; read again.
    if (this.adoptedSince(claims, records)) {
      this.wanted = "everything";
      return;
    }

    const questionsOf = new Map<string, Question[]>();
    for (const question of pending) questionsOf.set(question.sessionId, [...(questionsOf.get(question.sessionId) ?? []), question]);
    const next = new Map<string, PeerSession>();
    const own = new Set<string>();
    for (const session of sessions) {
      const view = this.viewOf(session, ownerOf.get(session.id), questionsOf.get(session.id) ?? []);
      if (view === "own") own.add(session.id);
      else if (view === "again") this.dirty.add(session.id);
      else next.set(session.id, view);
    }
    const before = this.byId;
    this.byId = next;
    this.questionsById = new Map([...next.values()].flatMap((peer) => peer.pendingQuestions.map((question) => [question.id, question] as const)));
    this.own = own;
    for (const [id, peer] of next) if (!sameView(before.get(id), peer)) this.changed.emit(id);
    for (const id of before.keys()) if (!next.has(id)) this.gone.emit(id);
    this.showHosts(hosts);
    this.showRecords(records);
  }

  /**
   * The sessions named as changed, read together (their rows with their leases, and their pending questions), and the
   * hosts: what a refresh between two full ones reads, in a constant number of queries however many changed. The hosts
   * are read for the owners' state (online, URL), not any session's.
   */
  private async refreshChanged(ids: readonly string[]): Promise<void> {
    const { backend } = this;
    const claims = this.claims;
    const [hosts, found] = await Promise.all([this.read(backend.listHosts()), backend.readSessions(ids)]);
    this.rows += found.reduce((rows, { pendingQuestions }) => rows + 1 + pendingQuestions.length, 0);
    const hostById = new Map(hosts.map((host) => [host.id, host]));
    const byId = new Map(found.map((entry) => [entry.session.id, entry]));
    const read = ids.map((id) => {
      const entry = byId.get(id);
      const owner = entry?.lease.hostId ? hostById.get(entry.lease.hostId) : undefined;
      return { id, session: entry?.session, owner, pending: [...(entry?.pendingQuestions ?? [])] };
    });
    const records = await this.announcedRecords();
    if (this.closed) return;
    if (this.adoptedSince(claims, records)) {
      for (const id of ids) this.dirty.add(id);
      return;
    }
    const before = new Map(ids.map((id) => [id, this.byId.get(id)]));
    for (const { id, session, owner, pending } of read) {
      const view = session ? this.viewOf(session, owner, pending) : undefined;
      this.forget(id);
      if (view === "own") this.own.add(id);
      else if (view === "again") this.dirty.add(id);
      else if (view) {
        this.byId.set(id, view);
        for (const question of view.pendingQuestions) this.questionsById.set(question.id, question);
      }
    }
    // This host's own at the last read and no longer run here (given up while fenced, deleted): nothing in the store
    // may have changed to name it, so it is read again, and shown as the store has it then.
    for (const id of this.own) {
      if (this.runsHere(id) || this.adopting.has(id)) continue;
      this.own.delete(id);
      this.dirty.add(id);
      this.again = true;
    }
    // An owner's state (online, URL) shows on each of its sessions.
    const hostsChanged = !sameHosts(this.hostList, hosts);
    if (hostsChanged) for (const [id, peer] of this.byId) if (!before.has(id)) before.set(id, peer);
    for (const [id, was] of before) {
      const peer = this.byId.get(id);
      if (peer && hostsChanged) this.byId.set(id, this.withOwnerOf(peer, hostById));
      const now = this.byId.get(id);
      if (now && !sameView(was, now)) this.changed.emit(id);
      else if (!now && was) this.gone.emit(id);
    }
    this.showHosts(hosts);
    this.showRecords(records);
  }

  /** How a session read from the store is shown: a peer's (or no host's), this host's own, or not yet (read it again). */
  private viewOf(session: Session, owner: HostInfo | undefined, pendingQuestions: Question[]): PeerSession | "own" | "again" {
    const mine = owner?.id === this.hostId;
    // Its copy is under way: neither deleted from the views nor this host's own until it is claimed.
    const shown = mine && this.adopting.has(session.id) ? this.byId.get(session.id) : undefined;
    if (shown) return shown;
    if (mine && (this.adopting.has(session.id) || this.runsHere(session.id))) return "own";
    // This host's own at the last read and no longer run here: deleted or lost since the leases were read (on its own
    // host the session's notifications wake nothing). Left out and read again, never shown as no host's meanwhile; if
    // the lease still names this host then (given up while fenced), that read lists it as no host's.
    if (mine && this.own.has(session.id)) {
      this.again = true;
      return "again";
    }
    // A lease of this host's that it does not run (an adoption whose copy and giving up failed, a session given up
    // while fenced) is given up at its next heartbeat: shown as no host's meanwhile, never missing from the views.
    const shownOwner = mine ? undefined : owner;
    return {
      session,
      owner: shownOwner ? { id: shownOwner.id, url: shownOwner.url } : null,
      ownerOnline: shownOwner?.alive ?? false,
      pendingQuestions,
    };
  }

  /** A peer's session as its owner is now (online or not, its URL). */
  private withOwnerOf(peer: PeerSession, hostById: ReadonlyMap<string, HostInfo>): PeerSession {
    const owner = peer.owner && hostById.get(peer.owner.id);
    if (!peer.owner || !owner) return peer;
    return { ...peer, owner: { id: owner.id, url: owner.url }, ownerOnline: owner.alive };
  }

  /** The session leaves the views and this host's own, with its questions. */
  private forget(sessionId: string): void {
    for (const question of this.byId.get(sessionId)?.pendingQuestions ?? []) this.questionsById.delete(question.id);
    this.byId.delete(sessionId);
    this.own.delete(sessionId);
  }

  /** This host adopted a session since the read began: what was read may show it as a peer's still, so it is read again. */
  private adoptedSince(claims: number, records: readonly LifecycleRecord[]): boolean {
    if (claims === this.claims) return false;
    this.again = true;
    for (const record of records) this.announced.add(record.id);
    return true;
  }

  private showHosts(hosts: readonly HostInfo[]): void {
    const before = this.hostList;
    this.hostList = hosts;
    if (!sameHosts(before, hosts)) this.hostsChanged.emit();
  }

  private showRecords(records: readonly LifecycleRecord[]): void {
    for (const record of records) {
      this.peerRecords.push(record);
      this.recorded.emit(record);
    }
    this.peerRecords.splice(0, Math.max(0, this.peerRecords.length - MAX_PEER_RECORDS));
  }

  /** A read, counted in {@link rowsRead}. */
  private async read<T>(query: Promise<T>): Promise<T> {
    const result = await query;
    this.rows += Array.isArray(result) ? result.length : result === undefined ? 0 : 1;
    return result;
  }

  /** The records other hosts announced, read in one query from the oldest of them. */
  private async announcedRecords(): Promise<LifecycleRecord[]> {
    if (this.announced.size === 0) return [];
    const wanted = new Set(this.announced);
    this.announced.clear();
    const from = Math.min(...wanted) - 1;
    return (await this.read(this.backend.recordsAfter(from))).filter((record) => wanted.has(record.id));
  }
}

/** What a view of a peer's session shows: a change in any of it is told to the views. */
function sameView(a: PeerSession | undefined, b: PeerSession): boolean {
  return (
    a !== undefined &&
    a.session.updatedAt === b.session.updatedAt &&
    a.session.title === b.session.title &&
    a.owner?.id === b.owner?.id &&
    a.owner?.url === b.owner?.url &&
    a.ownerOnline === b.ownerOnline &&
    a.pendingQuestions.length === b.pendingQuestions.length
  );
}

function sameHosts(a: readonly HostInfo[], b: readonly HostInfo[]): boolean {
  const key = (host: HostInfo) => `${host.id}\u0000${host.url}\u0000${host.incarnation}\u0000${host.alive}`;
  return a.length === b.length && a.map(key).join("\n") === b.map(key).join("\n");
}
