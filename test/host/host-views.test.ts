// How HostViews shows another host's session (docs/fleet.md, "Live state"): its owner's streamed live state only while the
// fleet directory names that owner, online; else what the shared store says of it. A real PeerLiveViews, a fake fleet.
import { describe, expect, it } from "vitest";
import type { PeerSession, Peers } from "../../src/host/fleet-directory.js";
import { HostViews, type HostViewsDeps } from "../../src/host/host-views.js";
import { PeerLiveViews } from "../../src/host/peer-live-views.js";
import { AgentRegistry } from "../../src/agents/agent-registry.js";
import { Sandboxes } from "../../src/sandbox/sandboxes.js";
import type { LiveSessionState } from "../../src/host/views.js";
import type { Session } from "../../src/store/sessions.js";

const session: Session = {
  id: "s1",
  agent: "demo",
  cwd: "/work",
  workspace: null,
  title: "hello",
  agentSessionId: null,
  agentRequest: null,
  agentState: null,
  worktree: null,
  createdAt: 900,
  updatedAt: 1_000,
};

const live: LiveSessionState = {
  id: "s1",
  state: "live",
  pid: 4242,
  holders: 1,
  turnActive: true,
  turnStartedAt: 950,
  releaseAt: null,
  preview: { role: "agent", text: "Sleeping for 10m", at: 990 },
  lastTurn: null,
};

const storeView = {
  state: "childless",
  pid: null,
  holders: 0,
  turnActive: false,
  turnStartedAt: null,
  releaseAt: null,
  preview: null,
  lastTurn: null,
};
const liveView = { state: "live", pid: 4242, holders: 1, turnActive: true, turnStartedAt: 950, releaseAt: null, preview: live.preview };

/** The fleet as the directory shows it: session s1, owned by whichever host and as online as the test says. */
class FakeFleet implements Peers {
  owner: PeerSession["owner"] = { id: "host-a", url: "http://127.0.0.1:7421" };
  ownerOnline = true;
  session(sessionId: string): PeerSession | undefined {
    return sessionId === session.id ? { session, owner: this.owner, ownerOnline: this.ownerOnline, pendingQuestions: [] } : undefined;
  }
  sessions(): readonly PeerSession[] {
    return [this.session(session.id)!];
  }
  question = () => undefined;
  storedQuestion = () => Promise.resolve(undefined);
  hosts = () => undefined;
  records = () => [];
}

/** This host (`host-b`) owns no session: only what peerView reads is real, the rest is never reached. */
function viewsOf(peers: Peers, liveViews: PeerLiveViews): HostViews {
  const store = { sessions: { get: () => undefined, list: () => [] }, journalEnds: { of: () => new Map() } };
  const sandboxes = new Sandboxes({
    config: { binds: [], hide: [], bwrap: "bwrap", locations: {} },
    agents: {},
    dataDir: "/d",
    agentStateDir: "/d/agent-state",
    installedAgentsDir: "/d/agents",
  });
  const registry = new AgentRegistry({}, "demo", "/d/agent-state");
  return new HostViews({ store, lost: new Set(), hostId: "host-b", peers, live: liveViews, sandboxes, registry } as unknown as HostViewsDeps);
}

describe("HostViews of a peer's session", () => {
  it("shows its owner's live state while the directory names that owner online, else the store's view", () => {
    const fleet = new FakeFleet();
    const liveViews = new PeerLiveViews(() => undefined);
    const views = viewsOf(fleet, liveViews);
    liveViews.update("host-a", live);
    expect(views.session("s1")).toMatchObject({ host: "host-a", hostOnline: true, ...liveView });
    expect(views.sessions({})).toEqual([expect.objectContaining({ id: "s1", ...liveView })]);

    // Its owner offline (a missed heartbeat): what it streamed last is not shown, even before its stream is dropped.
    fleet.ownerOnline = false;
    expect(views.session("s1")).toMatchObject({ host: "host-a", hostOnline: false, ...storeView });
    expect(views.sessions({})).toEqual([expect.objectContaining({ id: "s1", hostOnline: false, ...storeView })]);

    // Back online, its stream still open: its live state again.
    fleet.ownerOnline = true;
    expect(views.session("s1")).toMatchObject({ host: "host-a", hostOnline: true, ...liveView });

    // Another host owns it now (host-a released it, host-c took it): host-a's leftover state is never shown for it.
    fleet.owner = { id: "host-c", url: "http://127.0.0.1:7423" };
    expect(views.session("s1")).toMatchObject({ host: "host-c", hostOnline: true, ...storeView });
    liveViews.update("host-c", { ...live, pid: 5151 });
    expect(views.session("s1")).toMatchObject({ host: "host-c", ...liveView, pid: 5151 });

    // Released (owned by no host): the store's view.
    fleet.owner = null;
    expect(views.session("s1")).toMatchObject({ host: null, ...storeView });
  });
});
