// GET /api/own-sessions/events (src/server/own-session-events.ts), what its peers follow: a session it could not read
// (its store closed at shutdown) is not told deleted; an agent's message is sent as a change of its session (its preview),
// at most once per wait; a peer connecting once the host stopped is answered 503, and nothing is logged as an error.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { HostStoppedError } from "../../src/host/host-errors.js";
import type { SessionView } from "../../src/host/views.js";
import { OWN_SESSIONS_PATH, OwnSessionEvents, type StreamedHost } from "../../src/server/own-session-events.js";
import { startBerth } from "../../src/server/serve.js";
import { SseFrames } from "../../src/server/sse-frames.js";
import { waitUntil } from "../support/process-table.js";
import { sessionView } from "../support/session-view.js";
import { cleanUp, tempDir } from "./server-harness.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await cleanUp();
});

const view = (id: string, text = "hello") => sessionView(id, "host-a", { preview: { role: "agent", text, at: 1_001 } });

/** A host whose own sessions are what `views` holds; a session in `unreadable` throws when read (its store closed). */
class FakeHost implements StreamedHost {
  readonly views = new Map<string, SessionView>();
  readonly unreadable = new Set<string>();
  private readonly changed = new Set<(id: string) => void>();
  private readonly spoke = new Set<(id: string) => void>();
  ownSession = (id: string) => {
    if (this.unreadable.has(id)) throw new Error("The database connection is not open");
    return this.views.get(id);
  };
  ownSessions = () => [...this.views.values()];
  onSessionChanged = (listener: (id: string) => void) => this.listen(this.changed, listener);
  onAgentMessage = (listener: (id: string) => void) => this.listen(this.spoke, listener);
  onRecord = () => () => undefined;
  onPeerSessionGone = () => () => undefined;
  change(id: string): void {
    for (const listener of this.changed) listener(id);
  }
  speak(id: string): void {
    for (const listener of this.spoke) listener(id);
  }
  private listen(set: Set<(id: string) => void>, listener: (id: string) => void) {
    set.add(listener);
    return () => set.delete(listener);
  }
}

/** The stream served on loopback, read as a follower reads it: its events, in order. */
async function follow(host: FakeHost, previewEveryMs = 1_000) {
  const events = new OwnSessionEvents(host, 10, previewEveryMs);
  const server: Server = createServer((_req, res) => events.attach(res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const abort = new AbortController();
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        abort.abort();
        events.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${OWN_SESSIONS_PATH}`, { signal: abort.signal });
  const seen: Array<{ event: string; data: { id: string } }> = [];
  const frames = new SseFrames(1024 * 1024);
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>)
      for (const frame of frames.push(decoder.decode(chunk, { stream: true }), chunk.byteLength)) {
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event && data) seen.push({ event, data: JSON.parse(data) as { id: string } });
      }
  })().catch(() => undefined);
  await waitUntil(() => seen.length > 0, "the snapshot arrived");
  return { seen, told: (event: string) => seen.filter((e) => e.event === event).map((e) => e.data.id) };
}

describe("the stream of a host's own sessions", () => {
  it("tells nothing of a session it could not read (a closed store), and tells a deletion only of a session it told", async () => {
    const host = new FakeHost();
    host.views.set("s1", view("s1"));
    host.views.set("s2", view("s2"));
    const stream = await follow(host);
    expect(stream.seen[0]!.event).toBe("snapshot");
    host.unreadable.add("s1");
    host.change("s1");
    // A later change of another session: once it is told, the one before it was handled.
    host.views.set("s3", view("s3"));
    host.change("s3");
    await waitUntil(() => stream.told("session").includes("s3"), "s3's change was told");
    expect(stream.told("session_deleted")).toEqual([]);
    // Really gone: told deleted.
    host.views.delete("s2");
    host.change("s2");
    await waitUntil(() => stream.told("session_deleted").length > 0, "s2's deletion was told");
    expect(stream.told("session_deleted")).toEqual(["s2"]);
    expect(stream.told("session")).toEqual(["s3"]);
  });

  it("sends a session whose agent speaks, with its new preview, at most once per wait however many pieces it says", async () => {
    const host = new FakeHost();
    host.views.set("s1", view("s1", "Sleeping"));
    const stream = await follow(host, 200);
    // The agent says a piece every 10 ms for 600 ms: at most one `session` per 200 ms, the first one 200 ms after it began.
    const started = Date.now();
    let pieces = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        pieces += 1;
        host.views.set("s1", view("s1", `Sleeping for ${pieces}`));
        host.speak("s1");
        if (Date.now() - started >= 600) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    await waitUntil(() => stream.told("session").length > 0, "the agent's words were sent");
    const elapsed = Date.now() - started;
    // However late the timers ran on a loaded machine, never more than one per 200 ms of the run.
    expect(stream.told("session").length).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 1);
    const last = stream.seen.filter((e) => e.event === "session").at(-1)!.data as unknown as SessionView;
    expect(last.preview?.text).toMatch(/^Sleeping for \d+$/);
  });

  it("answers 503 shutting_down to a peer connecting once the host stopped, and logs no error", async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const berth = await startBerth({
      config: parseConfig({}),
      dataDir: tempDir("berth-own-sessions-"),
      listenHost: "127.0.0.1",
      port: 0,
      log: pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) }),
    });
    cleanups.push(() => berth.shutdown());
    await berth.host.shutdown();
    expect(() => berth.host.ownSessions()).toThrow(HostStoppedError);
    const response = await fetch(`${berth.server.url}${OWN_SESSIONS_PATH}`, { headers: { authorization: `Bearer ${berth.token}` } });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ error: "shutting_down", message: "the host is shutting down" });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
