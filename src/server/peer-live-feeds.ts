import { z } from "zod";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import type { HostView, LiveSessionState } from "../host/views.js";
import type { ClusterSecret } from "./cluster-secret.js";
import { OWN_SESSIONS_PATH, OWN_SESSIONS_SILENCE_MS } from "./own-session-events.js";
import { causeOf } from "./peer-reads.js";
import { SseFrames } from "./sse-frames.js";

/** What the feeds need of the host: the fleet's hosts, told when they change, and where to put what the peers say. */
export type FollowingHost = Pick<Host, "hosts" | "onHostsChanged" | "peerLive">;

export interface PeerLiveTimings {
  /** The first reconnection waits this long, each next one twice as long, up to `maxBackoffMs` (default 0.5 s, 10 s). */
  readonly firstBackoffMs: number;
  readonly maxBackoffMs: number;
  /** A peer that refused this host (another secret, a clock far off, a version without the route) is asked again this late, or at its next incarnation (default 5 min). */
  readonly refusedRetryMs: number;
  /** A peer that took this long to answer (its response's headers) is taken as a hung peer (default 15 s). */
  readonly connectMs: number;
  /** A stream that said nothing, not even a keep-alive, for this long after its headers is taken as a hung peer (default 15 s). */
  readonly silenceMs: number;
}

const DEFAULT_TIMINGS: PeerLiveTimings = {
  firstBackoffMs: 500,
  maxBackoffMs: 10_000,
  refusedRetryMs: 5 * 60_000,
  connectMs: OWN_SESSIONS_SILENCE_MS,
  silenceMs: OWN_SESSIONS_SILENCE_MS,
};
/** A frame larger than this (a peer gone wrong) ends the stream rather than fill this host's memory. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

const liveState = z.object({
  id: z.string(),
  host: z.string().nullable(),
  state: z.enum(["childless", "acquiring", "live", "releasing"]),
  pid: z.number().nullable(),
  holders: z.number(),
  turnActive: z.boolean(),
  turnStartedAt: z.number().nullable(),
  releaseAt: z.number().nullable(),
  preview: z.object({ role: z.enum(["user", "agent"]), text: z.string(), at: z.number() }).nullable(),
  // Optional: a peer of an earlier version sends none.
  lastTurn: z
    .object({ outcome: z.enum(["completed", "cancelled", "failed", "exited"]), reason: z.string().nullable(), at: z.number() })
    .nullable()
    .default(null),
});
// Each session is read on its own: one this host cannot read (a peer of another version) is shown as the store knows it.
const snapshot = z.object({ sessions: z.array(z.unknown()) });
const deleted = z.object({ id: z.string() });
const named = z.object({ id: z.string() });

/**
 * This host following each online peer's own sessions' live views (docs/fleet.md, "One view"): one stream per peer
 * (`GET /api/own-sessions/events` with a proof of the cluster secret), never a request per session, read in the
 * background. A stream is opened for each host the fleet directory says is online with a URL, and closed when the
 * directory says it went offline, left, or restarted (a new incarnation); a stream that ends or falls silent is opened
 * again with a growing wait. Whatever a peer's stream said is dropped the moment the stream ends: then this host shows
 * the shared store's view of its sessions again.
 */
export class PeerLiveFeeds {
  private readonly feeds = new Map<string, PeerFeed>();
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    private readonly host: FollowingHost,
    private readonly cluster: ClusterSecret,
    private readonly log: Logger,
    private readonly timings: PeerLiveTimings = DEFAULT_TIMINGS,
  ) {
    this.unsubscribe = host.onHostsChanged(() => this.follow());
    this.follow();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    for (const feed of this.feeds.values()) feed.close();
    this.feeds.clear();
  }

  /** One feed per online peer with a URL, of its current incarnation. */
  private follow(): void {
    if (this.closed) return;
    const wanted = new Map((this.host.hosts() ?? []).filter((peer) => !peer.self && peer.online && peer.url !== null).map((peer) => [peer.id, peer]));
    for (const [id, feed] of this.feeds) {
      const peer = wanted.get(id);
      if (peer && peer.url === feed.peer.url && peer.incarnation === feed.peer.incarnation) continue;
      feed.close();
      this.feeds.delete(id);
    }
    for (const [id, peer] of wanted) if (!this.feeds.has(id)) this.feeds.set(id, new PeerFeed(peer, this.host, this.cluster, this.log, this.timings));
  }
}

/** How one connection to a peer ended. */
type Ending = { readonly kind: "ended" | "failed" | "refused"; readonly reason: string; readonly heard: boolean };

/** The stream of one peer's own sessions: `connecting` → `following` → (ended) `waiting` → `connecting`… → `closed`, for good. */
class PeerFeed {
  private readonly stop = new AbortController();
  private state: "connecting" | "following" | "waiting" | "closed" = "connecting";
  /** A session it could not read was logged: once per peer's incarnation is enough to say that versions differ. */
  private toldUnreadable = false;

  constructor(
    readonly peer: HostView,
    private readonly host: FollowingHost,
    private readonly cluster: ClusterSecret,
    private readonly log: Logger,
    private readonly timings: PeerLiveTimings,
  ) {
    void this.run();
  }

  close(): void {
    this.state = "closed";
    this.stop.abort();
    this.host.peerLive.forget(this.peer.id);
  }

  private async run(): Promise<void> {
    const { firstBackoffMs, maxBackoffMs, refusedRetryMs } = this.timings;
    let backoff = firstBackoffMs;
    while (!this.stop.signal.aborted) {
      this.state = "connecting";
      const ending = await this.connect();
      // Closed: `close()` dropped its views already, and a feed of the peer's next incarnation may be filling them.
      if (this.isClosed()) return;
      this.host.peerLive.forget(this.peer.id);
      if (ending.heard) backoff = firstBackoffMs;
      const wait = ending.kind === "refused" ? refusedRetryMs : backoff;
      const fields = { peer: this.peer.id, url: this.peer.url, reason: ending.reason, retryInMs: wait };
      if (ending.kind === "refused")
        this.log.warn(fields, "a peer host refused this host's stream of its sessions: shown as the shared store knows them");
      else this.log.info(fields, "stream of a peer host's sessions ended: shown as the shared store knows them until it is back");
      if (ending.kind !== "refused") backoff = Math.min(backoff * 2, maxBackoffMs);
      this.state = "waiting";
      await delay(wait, this.stop.signal);
    }
  }

  /** `close()` may have run during any await: `state` is read again, not narrowed. */
  private isClosed(): boolean {
    return this.state === "closed";
  }

  /** One connection, read until it ends, fails or falls silent. */
  private async connect(): Promise<Ending> {
    const connection = new AbortController();
    const abort = () => connection.abort(new Error("the feed was closed"));
    this.stop.signal.addEventListener("abort", abort, { once: true });
    const { connectMs, silenceMs } = this.timings;
    let silence: NodeJS.Timeout | undefined;
    const quietFor = (ms: number, why: string) => {
      clearTimeout(silence);
      silence = setTimeout(() => connection.abort(new Error(why)), ms);
    };
    const heardNow = () => quietFor(silenceMs, `nothing heard for ${silenceMs / 1000} s (not even a keep-alive)`);
    let heard = false;
    try {
      quietFor(connectMs, `no answer in ${connectMs / 1000} s`);
      const target = new URL(OWN_SESSIONS_PATH, this.peer.url!);
      const response = await fetch(target, {
        headers: {
          ...this.cluster.headers({ id: this.peer.id, url: this.peer.url! }, "live-feed", "GET", target.pathname),
          accept: "text/event-stream",
        },
        signal: connection.signal,
        redirect: "manual",
      });
      // Closed while connecting: whatever the peer answered is not wanted any more.
      if (this.isClosed()) {
        await response.body?.cancel().catch(() => undefined);
        return { kind: "ended", reason: "the feed was closed", heard };
      }
      if (!response.ok || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        const refused = [401, 403, 404].includes(response.status);
        return { kind: refused ? "refused" : "failed", reason: `${this.peer.url} answered ${response.status}`, heard };
      }
      this.state = "following";
      heardNow();
      const frames = new SseFrames(MAX_FRAME_BYTES);
      const decoder = new TextDecoder();
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        heardNow();
        for (const frame of frames.push(decoder.decode(chunk, { stream: true }), chunk.byteLength)) if (this.frame(frame)) heard = true;
      }
      return { kind: "ended", reason: `${this.peer.url} ended the stream`, heard };
    } catch (error) {
      const cause = connection.signal.aborted ? connection.signal.reason : error;
      return { kind: "failed", reason: causeOf(cause), heard };
    } finally {
      clearTimeout(silence);
      connection.abort();
      this.stop.signal.removeEventListener("abort", abort);
    }
  }

  /** One event of the peer's stream, into the host's views; true if it was one (not a comment or the `retry:` line). Throws on what is not the route's. */
  private frame(frame: string): boolean {
    let event = "message";
    const data: string[] = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (data.length === 0 || this.isClosed()) return false;
    const body: unknown = JSON.parse(data.join("\n"));
    const sink = this.host.peerLive;
    if (event === "snapshot") {
      const states = snapshot.parse(body).sessions.map((session) => this.ownState(session));
      sink.replace(
        this.peer.id,
        states.filter((state) => state !== undefined),
      );
    } else if (event === "session") {
      const state = this.ownState(body);
      if (state) sink.update(this.peer.id, state);
      else {
        // Not the peer's own, or unreadable: whatever it said of that session before is not shown any more.
        const session = named.safeParse(body);
        if (session.success) sink.remove(this.peer.id, session.data.id);
      }
    } else if (event === "session_deleted") sink.remove(this.peer.id, deleted.parse(body).id);
    return true;
  }

  /** The live state of one session the peer sent, if it is the peer's own (one hop) and this host can read it; what it cannot is logged once. */
  private ownState(session: unknown): LiveSessionState | undefined {
    const view = liveState.safeParse(session);
    if (view.success) return view.data.host === this.peer.id ? stateOf(view.data) : undefined;
    if (!this.toldUnreadable) {
      this.toldUnreadable = true;
      const id = named.safeParse(session);
      this.log.warn(
        {
          peer: this.peer.id,
          url: this.peer.url,
          sessionId: id.success ? id.data.id : null,
          reason: view.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "),
        },
        "a peer host sent a session this host cannot read (another version?): shown as the shared store knows it",
      );
    }
    return undefined;
  }
}

function stateOf({ id, state, pid, holders, turnActive, turnStartedAt, releaseAt, preview, lastTurn }: z.infer<typeof liveState>): LiveSessionState {
  return { id, state, pid, holders, turnActive, turnStartedAt, releaseAt, preview, lastTurn };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
