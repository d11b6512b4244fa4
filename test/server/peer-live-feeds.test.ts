// Following the peers' own sessions (docs/fleet.md, "Live state"): one stream per online peer, its proof of the cluster
// secret checked by a real ClusterSecret on a real loopback HTTP server playing the peer; what the stream says lands in
// the host's live views (the real PeerLiveViews), one hop only; a stream that ends, falls silent or is refused is dropped
// and opened again as documented; a peer gone offline or restarted is followed no more, or anew.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PeerLiveViews } from "../../src/host/peer-live-views.js";
import type { HostView } from "../../src/host/views.js";
import { ClusterSecret } from "../../src/server/cluster-secret.js";
import { type FollowingHost, PeerLiveFeeds, type PeerLiveTimings } from "../../src/server/peer-live-feeds.js";
import { waitUntil } from "../support/process-table.js";
import { sessionView } from "../support/session-view.js";

const SECRET = "feeds-test-secret-0123456789abcdef";
/** Short waits; a silence long enough that only the test of a silent peer ever meets it. */
const TIMINGS: PeerLiveTimings = { firstBackoffMs: 50, maxBackoffMs: 200, refusedRetryMs: 60_000, connectMs: 60_000, silenceMs: 60_000 };
/** Counted from the response's headers on (connecting has its own minute): only what the fake peer does not say meets it. */
const SILENCE_MS = 1_000;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.unstubAllGlobals();
});

/** A session view as a peer streams it: `host` names the host that shows it as its own; a peer of another version may send what this one cannot read. */
const view = (id: string, host: string, fields: Record<string, unknown> = {}) => ({ ...sessionView(id, host), ...fields });

const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Peer `host-a` on loopback: each stream request, proof checked as a real host checks it, is handed to `serve`. */
async function fakePeer(serve: (res: ServerResponse, req: IncomingMessage) => void) {
  const requests: Array<{ path: string | undefined; presence: string; res: ServerResponse }> = [];
  let secret: ClusterSecret | undefined;
  const server: Server = createServer((req, res) => {
    const presence = secret!.presence(req);
    requests.push({ path: req.url, presence: presence.kind === "peer" ? `peer ${presence.hostId}` : presence.kind, res });
    if (presence.kind !== "peer") {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("retry: 2000\n\n");
    serve(res, req);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  secret = new ClusterSecret(SECRET, "host-a", url);
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url, requests };
}

/** This host (`host-b`) as the feeds see it: the fleet's hosts, and real live views that record each change told. */
class FleetOfB implements FollowingHost {
  readonly told: string[] = [];
  readonly peerLive = new PeerLiveViews((sessionId) => this.told.push(sessionId));
  readonly logs: Array<Record<string, unknown>> = [];
  readonly log = pino({ level: "info" }, { write: (line: string) => void this.logs.push(JSON.parse(line) as Record<string, unknown>) });
  private list: HostView[] = [];
  private readonly listeners = new Set<() => void>();

  hosts(): HostView[] {
    return this.list;
  }

  onHostsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  setHosts(hosts: HostView[]): void {
    this.list = hosts;
    for (const listener of this.listeners) listener();
  }
}

const hostA = (url: string, fields: Partial<HostView> = {}): HostView => ({
  id: "host-a",
  url,
  incarnation: 1,
  registeredAt: 0,
  heartbeatAt: 0,
  online: true,
  self: false,
  ...fields,
});
const self: HostView = { id: "host-b", url: "http://127.0.0.1:1", incarnation: 1, registeredAt: 0, heartbeatAt: 0, online: true, self: true };

function follow(fleet: FleetOfB, { secret = SECRET, timings = TIMINGS } = {}): PeerLiveFeeds {
  const feeds = new PeerLiveFeeds(fleet, new ClusterSecret(secret, "host-b"), fleet.log, timings);
  cleanups.push(() => feeds.close());
  return feeds;
}

describe("following the peers' own sessions", () => {
  it("puts a peer's snapshot, changes and deletions into the live views, its own sessions only (one hop)", async () => {
    const peer = await fakePeer((res) => {
      res.write(frame("snapshot", { sessions: [view("s1", "host-a"), view("s2", "host-a"), view("c1", "host-c")] }));
      res.write(frame("session", view("s1", "host-a", { turnActive: false, turnStartedAt: null })));
      res.write(frame("session", view("c2", "host-c")));
      res.write(frame("session_deleted", { id: "s2" }));
    });
    const fleet = new FleetOfB();
    fleet.setHosts([self, hostA(peer.url)]);
    follow(fleet);
    await waitUntil(() => fleet.peerLive.state("host-a", "s2") === undefined && fleet.told.includes("s2"), "the peer's deletion arrived");
    expect(peer.requests.map(({ path, presence }) => `${presence} ${path}`)).toEqual(["peer host-b /api/own-sessions/events"]);
    expect(fleet.peerLive.state("host-a", "s1")).toEqual({
      id: "s1",
      state: "live",
      pid: 4242,
      holders: 1,
      turnActive: false,
      turnStartedAt: null,
      releaseAt: null,
      preview: { role: "agent", text: "Sleeping for 10m", at: 1_001 },
      lastTurn: null,
    });
    // What host A shows of host C's sessions is never taken for A's.
    expect(fleet.peerLive.state("host-a", "c1")).toBeUndefined();
    expect(fleet.peerLive.state("host-a", "c2")).toBeUndefined();
    expect(fleet.told).toEqual(["s1", "s2", "s1", "s2"]);
  });

  it("drops a silent peer's states and opens the stream again; drops them when it ends, and asks again", async () => {
    // The first stream says its snapshot, then nothing at all (a hung host); the second one ends after its snapshot.
    const peer = await fakePeer((res) => {
      res.write(frame("snapshot", { sessions: [view("s1", "host-a")] }));
      if (peer.requests.length === 2) res.end();
    });
    const fleet = new FleetOfB();
    fleet.setHosts([self, hostA(peer.url)]);
    follow(fleet, { timings: { ...TIMINGS, silenceMs: SILENCE_MS } });
    await waitUntil(() => fleet.peerLive.state("host-a", "s1") !== undefined, "the snapshot arrived");
    await waitUntil(() => peer.requests.length >= 2, "the silent stream was opened again");
    const silence = fleet.logs.find((line) => String(line.reason).startsWith(`nothing heard for ${SILENCE_MS / 1000} s`));
    expect(silence).toMatchObject({ level: 30, peer: "host-a", url: peer.url, retryInMs: TIMINGS.firstBackoffMs });
    await waitUntil(() => peer.requests.length >= 3, "the ended stream was opened again");
    expect(fleet.logs.some((line) => line.reason === `${peer.url} ended the stream`)).toBe(true);
    // Each end dropped the peer's states before the next snapshot brought them back: s1 told gone, then back, twice.
    await waitUntil(() => fleet.told.length >= 5, "the third snapshot arrived");
    expect(fleet.told.slice(0, 5)).toEqual(["s1", "s1", "s1", "s1", "s1"]);
  });

  it("waits long after a refusal (another secret), and asks the peer's next incarnation at once", async () => {
    const peer = await fakePeer((res) => res.write(frame("snapshot", { sessions: [view("s1", "host-a")] })));
    const fleet = new FleetOfB();
    fleet.setHosts([self, hostA(peer.url)]);
    follow(fleet, { secret: "another-secret-0123456789abcdef" });
    await waitUntil(() => fleet.logs.some((line) => line.level === 40), "the refusal was logged");
    expect(fleet.logs.find((line) => line.level === 40)).toMatchObject({
      msg: "a peer host refused this host's stream of its sessions: shown as the shared store knows them",
      peer: "host-a",
      reason: `${peer.url} answered 401`,
      retryInMs: TIMINGS.refusedRetryMs,
    });
    expect(peer.requests.map((request) => request.presence)).toEqual(["refused"]);
    // Restarted (a new incarnation: its operator may have fixed its secret): asked again at once (refused again here).
    fleet.setHosts([self, hostA(peer.url, { incarnation: 2 })]);
    await waitUntil(() => peer.requests.length === 2, "the new incarnation was asked");
    expect(peer.requests.map((request) => request.presence)).toEqual(["refused", "refused"]);
  });

  it("stops following a peer that went offline and drops its states, and follows it again once it is back", async () => {
    const peer = await fakePeer((res) => res.write(frame("snapshot", { sessions: [view("s1", "host-a")] })));
    const fleet = new FleetOfB();
    fleet.setHosts([self, hostA(peer.url)]);
    follow(fleet);
    await waitUntil(() => fleet.peerLive.state("host-a", "s1") !== undefined, "the snapshot arrived");
    const first = peer.requests[0]!.res;
    fleet.setHosts([self, hostA(peer.url, { online: false })]);
    expect(fleet.peerLive.state("host-a", "s1")).toBeUndefined();
    await waitUntil(() => first.closed, "the stream to the offline peer was closed");
    fleet.setHosts([self, hostA(peer.url)]);
    await waitUntil(() => fleet.peerLive.state("host-a", "s1") !== undefined, "the peer back online was followed again");
    expect(peer.requests).toHaveLength(2);
  });

  it("reads each session of a snapshot on its own: one it cannot read (another version) is shown as the store knows it, logged once", async () => {
    const peer = await fakePeer((res) => {
      res.write(
        frame("snapshot", {
          sessions: [
            view("s1", "host-a"),
            view("s2", "host-a", { state: "hibernating" }),
            view("s3", "host-a", { preview: { role: "system", text: "?", at: 1 } }),
          ],
        }),
      );
      res.write(frame("session", view("s4", "host-a")));
      // What it says of s1 next is unreadable: what it said before is not shown any more.
      res.write(frame("session", view("s1", "host-a", { state: "hibernating" })));
    });
    const fleet = new FleetOfB();
    fleet.setHosts([self, hostA(peer.url)]);
    follow(fleet);
    await waitUntil(() => fleet.told.length >= 3, "the snapshot and both changes arrived");
    expect(fleet.told).toEqual(["s1", "s4", "s1"]);
    expect(["s1", "s2", "s3", "s4"].map((id) => fleet.peerLive.state("host-a", id)?.id)).toEqual([undefined, undefined, undefined, "s4"]);
    const unreadable = fleet.logs.filter((line) => line.level === 40);
    expect(unreadable).toEqual([
      expect.objectContaining({
        msg: "a peer host sent a session this host cannot read (another version?): shown as the shared store knows it",
        peer: "host-a",
        sessionId: "s2",
        reason: expect.stringContaining("state: "),
      }),
    ]);
    // The stream goes on: nothing ended it.
    expect(peer.requests).toHaveLength(1);
  });

  it("stays closed once closed, even when the peer's answer arrives after: its body is cancelled, nothing is asked again", async () => {
    const peer = await fakePeer((res) => res.write(frame("snapshot", { sessions: [view("s1", "host-a")] })));
    const fleet = new FleetOfB();
    fleet.setHosts([self, hostA(peer.url)]);
    // The peer answers as the feeds are closed: the feed reads the answer only after its close.
    const realFetch = globalThis.fetch;
    let feeds: PeerLiveFeeds | undefined;
    let calls = 0;
    let cancelled = false;
    vi.stubGlobal("fetch", async (input: URL, init: RequestInit) => {
      calls += 1;
      const response = await realFetch(input, init);
      const reader = response.body!.getReader();
      const body = new ReadableStream<Uint8Array>({
        pull: async (controller) => {
          const chunk = await reader.read();
          if (chunk.done) controller.close();
          else controller.enqueue(chunk.value);
        },
        cancel: () => {
          cancelled = true;
          return reader.cancel();
        },
      });
      feeds!.close();
      return new Response(body, { status: response.status, headers: response.headers });
    });
    feeds = follow(fleet);
    await waitUntil(() => cancelled, "the answer that came after the close was cancelled");
    expect(calls).toBe(1);
    expect(fleet.peerLive.state("host-a", "s1")).toBeUndefined();
    expect(fleet.logs.filter((line) => line.peer === "host-a")).toEqual([]);
  });
});
