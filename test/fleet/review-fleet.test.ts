// A session's changes and review comments in a fleet (docs/review.md): two real `berth serve --store postgres://…`
// sharing a throwaway cluster and a cluster secret. A's session in a git repository is read and commented on through
// B (relayed to A, which has the directory); the comments are in PostgreSQL, so A finds them in the mirror it builds
// again after a restart; sent through B, they reach A's agent as one prompt.
import { afterEach, describe, expect, it } from "vitest";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { initRepository, writeIn } from "../git/git-repository.js";
import { eventually, FleetTestBed, getJson, messageText, stopHost } from "./fleet-harness.js";
import type { JournalEvent } from "../../src/store/events.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

const fleet = { heartbeatInterval: "250ms", hostTtl: "6s", secret: "review-test-secret-0123456789abcdef" };

async function call(host: { url: string; token: string }, method: string, path: string, body?: unknown) {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${host.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("changes and review comments in a fleet", () => {
  it("are read and written through another host (relayed to the owner), kept in PostgreSQL over the owner's restart, and sent to its agent", async () => {
    const storeUrl = await postgres.freshDatabase();
    const repo = bed.tempDir("berth-review-fleet-repo-");
    initRepository(repo, { "a.txt": "one\n" });
    writeIn(repo, "a.txt", "one\ntwo\n");
    const dataOfA = bed.tempDir("berth-review-fleet-a-");
    let a = await bed.serve(storeUrl, "host-a", dataOfA, { fleet });
    const b = await bed.serve(storeUrl, "host-b", bed.tempDir("berth-review-fleet-b-"), { fleet });
    const created = await call(a, "POST", "/api/sessions", { cwd: repo });
    const id = created.body.id as string;
    await eventually(async () => (await getJson(b.url, b.token, `/api/sessions/${id}`)).status === 200, "B lists A's session");

    expect((await call(b, "GET", `/api/sessions/${id}/changes`)).body).toMatchObject({ files: [{ path: "a.txt", status: "modified", added: 1 }] });
    // The live stream is the owner's own: another host names it rather than relay a stream.
    const stream = await call(b, "GET", `/api/sessions/${id}/changes/events`);
    expect(stream).toMatchObject({
      status: 409,
      body: { error: "owned_by_other_host", message: expect.stringContaining(`runs on host "host-a" (${a.url})`) },
    });
    expect(await call(b, "POST", `/api/sessions/${id}/comments`, { path: "a.txt", line: 2, side: "new", body: "why two?" })).toMatchObject({
      status: 201,
      body: { sessionId: id, path: "a.txt", sentAt: null },
    });

    await stopHost(a.server);
    a = await bed.serve(storeUrl, "host-a", dataOfA, { fleet });
    await eventually(
      async () => (await getJson<{ comments: unknown[] }>(b.url, b.token, `/api/sessions/${id}/comments`)).status === 200,
      "A answers again",
    );
    const kept = await call(b, "GET", `/api/sessions/${id}/comments`);
    expect(kept.body.comments).toEqual([expect.objectContaining({ path: "a.txt", line: 2, body: "why two?", sentAt: null })]);

    const sent = await call(b, "POST", `/api/sessions/${id}/comments/send`, {});
    expect(sent).toMatchObject({ status: 202, body: { prompt: "Review comments on your changes:\n\na.txt:2 — why two?\n    2 | two\n" } });
    const events = async () => (await getJson<{ events: JournalEvent[] }>(a.url, a.token, `/api/sessions/${id}/events`)).body.events;
    await eventually(async () => (await events()).some((event) => event.kind === "turn_ended"), "the review's turn ended on A");
    expect(messageText(await events())).toBe(sent.body.prompt);
    expect((await call(a, "GET", `/api/sessions/${id}/comments`)).body.comments).toEqual([expect.objectContaining({ sentAt: expect.any(Number) })]);
  });
});
