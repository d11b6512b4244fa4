import type { LiveSessionState, PeerLiveSink } from "./views.js";

/**
 * What each peer host last said of the live state of its own sessions (its agent child, holders, turn, release
 * clock, last words), as the edge that follows the peers' streams put it here (docs/fleet.md, "One view"). Keyed by
 * peer and session: the views show a peer's state of a session only while the fleet directory names that peer its
 * online owner, so a state left behind by a former owner is never shown. Each change is told to `changed` (the
 * event stream's `session`), and only a change: a peer repeating itself tells nothing.
 */
export class PeerLiveViews implements PeerLiveSink {
  private readonly byPeer = new Map<string, Map<string, LiveSessionState>>();

  constructor(private readonly changed: (sessionId: string) => void) {}

  /** The peer's live state of the session, if it streamed one and has not dropped it since. */
  state(peerId: string, sessionId: string): LiveSessionState | undefined {
    return this.byPeer.get(peerId)?.get(sessionId);
  }

  replace(peerId: string, states: readonly LiveSessionState[]): void {
    const before = this.byPeer.get(peerId) ?? new Map<string, LiveSessionState>();
    const next = new Map(states.map((state) => [state.id, state] as const));
    this.byPeer.set(peerId, next);
    for (const [id, state] of next) if (!sameState(before.get(id), state)) this.changed(id);
    for (const id of before.keys()) if (!next.has(id)) this.changed(id);
  }

  update(peerId: string, state: LiveSessionState): void {
    let states = this.byPeer.get(peerId);
    if (!states) {
      states = new Map();
      this.byPeer.set(peerId, states);
    }
    const before = states.get(state.id);
    states.set(state.id, state);
    if (!sameState(before, state)) this.changed(state.id);
  }

  remove(peerId: string, sessionId: string): void {
    if (this.byPeer.get(peerId)?.delete(sessionId)) this.changed(sessionId);
  }

  forget(peerId: string): void {
    const states = this.byPeer.get(peerId);
    if (!states) return;
    this.byPeer.delete(peerId);
    for (const id of states.keys()) this.changed(id);
  }
}

function sameState(a: LiveSessionState | undefined, b: LiveSessionState): boolean {
  return (
    a !== undefined &&
    a.state === b.state &&
    a.pid === b.pid &&
    a.holders === b.holders &&
    a.turnActive === b.turnActive &&
    a.turnStartedAt === b.turnStartedAt &&
    a.releaseAt === b.releaseAt &&
    a.preview?.role === b.preview?.role &&
    a.preview?.text === b.preview?.text &&
    a.preview?.at === b.preview?.at &&
    a.lastTurn?.outcome === b.lastTurn?.outcome &&
    a.lastTurn?.at === b.lastTurn?.at
  );
}
