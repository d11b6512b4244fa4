// One view, live (docs/fleet.md): two real `berth serve --store postgres://…` with one cluster secret. Host B shows
// host A's session as A shows it while A runs a turn for a client holding it (its agent's pid, the holder, the turn),
// in B's REST, B's event stream and B's dashboard; the turn's end reaches B's stream; once A is killed, B shows the
// shared store's view again (no pid, childless, host offline). A's stream for its peers carries A's own sessions only.
import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ClusterSecret } from "../../src/server/cluster-secret.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";
import { launchBrowser, openPage, waitUntilGone } from "../web/dashboard-harness.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson, OperatorStream, sleepingTurn } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
const streams: OperatorStream[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await bed.cleanup();
});

const SECRET = "peer-live-test-secret-0123456789abcdef";

interface View {
  id: string;
  host: string | null;
  hostOnline: boolean;
  state: string;
  pid: number | null;
  holders: number;
  turnActive: boolean;
  turnStartedAt: number | null;
  preview: { role: string; text: string } | null;
}

/** A fleet host at the address it listens on, with the cluster secret. */
function startHost(storeUrl: string, id: string) {
  return bed.serve(storeUrl, id, bed.tempDir(`berth-live-${id}-`), { fleet: { heartbeatInterval: "250ms", hostTtl: "2000ms", secret: SECRET } });
}

/** The events of a host's stream of its own sessions, read as peer `from` would, until `enough` says so. */
async function ownSessionsAsPeer(url: string, from: string, to: string, enough: (text: string) => boolean): Promise<string> {
  const path = "/api/own-sessions/events";
  const abort = new AbortController();
  const response = await fetch(`${url}${path}`, { headers: new ClusterSecret(SECRET, from).headers(to, "GET", path), signal: abort.signal });
  expect(response.status).toBe(200);
  let text = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (enough(text)) break;
    }
  } finally {
    abort.abort();
  }
  return text;
}

describe("one view of a fleet, live", () => {
  it("shows a peer's running session as its owner does (REST, event stream, dashboard), and the store's view once the owner is dead", async () => {
    const storeUrl = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-live-work-");
    const a = await startHost(storeUrl, "host-a");
    const b = await startHost(storeUrl, "host-b");
    const stream = await OperatorStream.open(b.url, b.token);
    streams.push(stream);
    const launched = await launchBrowser();
    try {
      const opened = await openPage(launched.browser, b.url, `/?token=${b.token}`);

      // A session on A whose agent sleeps in a turn, held by A's client: B shows what A shows.
      const { acp, sessionId, turn, agentPid } = await sleepingTurn(a, workDir, "10m");
      const onA = async () => (await getJson<View>(a.url, a.token, `/api/sessions/${sessionId}`)).body;
      const onB = async () => (await getJson<View>(b.url, b.token, `/api/sessions/${sessionId}`)).body;
      await eventually(async () => (await onB()).turnActive, "host B shows A's turn running");
      const live = await onB();
      expect(live).toMatchObject({ id: sessionId, host: "host-a", hostOnline: true, state: "live", pid: agentPid, holders: 1, turnActive: true });
      expect(live.turnStartedAt).toBe((await onA()).turnStartedAt);
      expect(live.preview?.text).toContain("Sleeping for");
      const listed = (await getJson<{ sessions: View[] }>(b.url, b.token, "/api/sessions")).body.sessions.find((view) => view.id === sessionId);
      expect(listed).toMatchObject({ host: "host-a", state: "live", pid: agentPid, holders: 1, turnActive: true });
      await waitUntil(
        () => stream.events<View>("session").some((view) => view.id === sessionId && view.turnActive && view.pid === agentPid),
        "host B streams A's running turn",
      );

      // B's dashboard shows it running on A, with A's agent's pid.
      const card = opened.page.locator(`li.session[data-session-id="${sessionId}"]`);
      await card.locator(".running", { hasText: "running for" }).waitFor();
      expect(await card.locator("dd.mono").textContent()).toBe(String(agentPid));
      expect(await card.locator("dd.holders").textContent()).toBe("1");

      // The turn ends on A (cancelled by its client): B's stream tells it.
      await acp.agent.notify(methods.agent.session.cancel, { sessionId });
      expect(await turn).toMatchObject({ stopReason: "cancelled" });
      await waitUntil(
        () => stream.events<View>("session").some((view) => view.id === sessionId && !view.turnActive && view.pid === agentPid),
        "host B streams the end of A's turn",
      );
      expect(await onB()).toMatchObject({ state: "live", pid: agentPid, holders: 1, turnActive: false });
      await card.getByText("idle", { exact: true }).waitFor();
      expect(opened.errors).toEqual([]);
      await opened.close();

      // One hop: what A streams to its peers is its own sessions, never what it shows of B's.
      const onBOwn = new AcpClient(b.acpUrl, b.token);
      await onBOwn.initialize();
      const sessionOfB = await onBOwn.newSession(workDir);
      onBOwn.close();
      await eventually(async () => (await getJson<View>(a.url, a.token, `/api/sessions/${sessionOfB}`)).status === 200, "host A lists B's session");
      const snapshot = await ownSessionsAsPeer(a.url, "host-b", "host-a", (text) => text.includes("event: snapshot\n") && text.endsWith("\n\n"));
      const frame = snapshot.split("\n\n").find((candidate) => candidate.startsWith("event: snapshot\n"))!;
      const { sessions } = JSON.parse(frame.slice(frame.indexOf("\ndata: ") + 7)) as { sessions: View[] };
      expect(sessions.map((view) => `${view.host} ${view.id}`)).toEqual([`host-a ${sessionId}`]);

      // A killed: B shows the store's view again, with A offline and no agent.
      acp.close();
      await bed.killHost(a);
      await eventually(async () => (await onB()).hostOnline === false, "host B shows A offline");
      expect(await onB()).toMatchObject({ host: "host-a", hostOnline: false, state: "childless", pid: null, holders: 0, turnActive: false });
      await waitUntil(
        () => stream.events<View>("session").some((view) => view.id === sessionId && !view.hostOnline && view.pid === null),
        "host B streams A's session as the store knows it",
      );
    } finally {
      const browserPids = await launched.pids().catch(() => []);
      await launched.browser.close();
      expect(await waitUntilGone(browserPids)).toEqual([]);
    }
    expect(errorLines(b.server)).toEqual([]);
  }, 120_000);
});
