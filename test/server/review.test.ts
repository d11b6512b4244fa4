import { existsSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import type { ReviewComment } from "../../src/store/review-comments.js";
import { gitIn, initRepository, writeIn } from "../git/git-repository.js";
import { ChangeEventReader, changedPaths } from "./change-events.js";
import { cleanUp, startFixture, tempDir, waitUntil, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

const send = (method: string, value: unknown) => ({ method, headers: { "content-type": "application/json" }, body: JSON.stringify(value) });

async function json<T>(response: Promise<Response>): Promise<{ status: number; body: T }> {
  const res = await response;
  return { status: res.status, body: (res.status === 204 ? null : await res.json()) as T };
}

async function sessionIn(fixture: BerthFixture, cwd: string): Promise<SessionView> {
  const created = await json<SessionView>(fixture.api("/api/sessions", send("POST", { cwd })));
  expect(created.status).toBe(201);
  return created.body;
}

/** A repository with one commit, then every kind of change a session's agent makes. */
function changedRepository(): string {
  const dir = tempDir("berth-review-repo-");
  initRepository(dir, {
    "a.txt": "one\ntwo\nthree\n",
    "gone.txt": "bye\n",
    "old-name.txt": "a\nb\nc\nd\ne\nf\n",
    "same.txt": "untouched\n",
    ".gitignore": "ignored/\n",
  });
  writeIn(dir, "a.txt", "one\n2\nthree\nfour\n");
  unlinkSync(join(dir, "gone.txt"));
  // Moved without git: found as a rename all the same.
  renameSync(join(dir, "old-name.txt"), join(dir, "new-name.txt"));
  writeIn(dir, "src/new.ts", "export const x = 1;\n");
  writeIn(dir, "ignored/build.log", "not a change\n");
  writeIn(dir, "logo.bin", Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02, 0x00]));
  return dir;
}

describe("a session's changes", () => {
  it("lists what changed against HEAD (modified, deleted, renamed, untracked, binary; ignored left out) and each file's texts and patch", async () => {
    const fixture = await startFixture();
    const dir = changedRepository();
    const head = gitIn(dir, "rev-parse", "HEAD");
    const session = await sessionIn(fixture, dir);
    const changes = await json(fixture.api(`/api/sessions/${session.id}/changes`));
    expect(changes).toEqual({
      status: 200,
      body: {
        base: head,
        head,
        files: [
          { path: "a.txt", status: "modified", added: 2, removed: 1, binary: false },
          { path: "gone.txt", status: "deleted", added: 0, removed: 1, binary: false },
          { path: "logo.bin", status: "added", added: 0, removed: 0, binary: true },
          { path: "new-name.txt", oldPath: "old-name.txt", status: "renamed", added: 0, removed: 0, binary: false },
          { path: "src/new.ts", status: "added", added: 1, removed: 0, binary: false },
        ],
        totals: { files: 5, added: 3, removed: 2 },
      },
    });
    // The repository's own index is left as it was: nothing staged behind the user's back.
    expect(gitIn(dir, "diff", "--cached", "--name-only")).toBe("");

    const file = (path: string) =>
      json<Record<string, unknown>>(fixture.api(`/api/sessions/${session.id}/changes/file?path=${encodeURIComponent(path)}`));
    expect(await file("a.txt")).toEqual({
      status: 200,
      body: {
        path: "a.txt",
        status: "modified",
        binary: false,
        oldText: "one\ntwo\nthree\n",
        newText: "one\n2\nthree\nfour\n",
        patch: expect.stringContaining("@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n"),
      },
    });
    expect((await file("src/new.ts")).body).toMatchObject({ status: "added", oldText: null, newText: "export const x = 1;\n" });
    expect((await file("gone.txt")).body).toMatchObject({ status: "deleted", oldText: "bye\n", newText: null });
    expect((await file("new-name.txt")).body).toMatchObject({
      oldPath: "old-name.txt",
      status: "renamed",
      patch: expect.stringContaining("rename from old-name.txt\nrename to new-name.txt"),
    });
    expect((await file("logo.bin")).body).toMatchObject({
      binary: true,
      oldText: null,
      newText: null,
      patch: expect.stringContaining("Binary files"),
    });

    for (const [path, code, message] of [
      ["../outside.txt", "invalid_path", /leaves the repository/],
      ["src/../../x", "invalid_path", /leaves the repository/],
      ["/etc/passwd", "invalid_path", /absolute path "\/etc\/passwd"/],
      ["same.txt", "path_not_in_changes", /"same.txt" is not among the session's changed files/],
      ["ignored/build.log", "path_not_in_changes", /not among/],
    ] as const) {
      const refused = await file(path);
      expect(refused.status, path).toBe(400);
      expect(refused.body).toMatchObject({ error: code, message: expect.stringMatching(message) });
    }
    expect((await json(fixture.api(`/api/sessions/${session.id}/changes/file`))).status).toBe(400);
  });

  it("cuts a large file's texts at the limit, saying so, and answers a directory outside git with 409 naming it", async () => {
    const fixture = await startFixture();
    const dir = tempDir("berth-review-big-");
    initRepository(dir, { "big.txt": "" });
    const line = `${"x".repeat(99)}\n`;
    writeIn(dir, "big.txt", line.repeat(3_000));
    const session = await sessionIn(fixture, dir);
    const big = await json<{ newText: string; cut: Record<string, number> }>(fixture.api(`/api/sessions/${session.id}/changes/file?path=big.txt`));
    expect(big.body.cut).toEqual({ limitBytes: 262_144, newBytes: 300_000, patchBytes: expect.any(Number) });
    expect(big.body.newText.length).toBe(2_621 * 100);
    expect(big.body.newText.endsWith("\n")).toBe(true);

    const plain = tempDir("berth-review-plain-");
    const outside = await sessionIn(fixture, plain);
    expect(await json(fixture.api(`/api/sessions/${outside.id}/changes`))).toEqual({
      status: 409,
      body: { error: "not_a_git_repository", message: `the session's directory ${plain} is not in a git repository, so it has no changes to show` },
    });
    expect((await json(fixture.api("/api/sessions/nope/changes"))).status).toBe(404);
  });
});

describe("a session's changes, live", () => {
  it("streams the changes when a client attaches and again after the agent writes a file (an EventSource's ticket works too)", async () => {
    const fixture = await startFixture();
    const dir = tempDir("berth-review-live-");
    initRepository(dir, { "README.md": "# project\n" });
    const session = await sessionIn(fixture, dir);
    const { ticket } = (await json<{ ticket: string }>(fixture.api("/api/tickets", { method: "POST" }))).body;
    // No token header: the ticket alone opens it, as a browser's EventSource would.
    const res = await fetch(`${fixture.url}/api/sessions/${session.id}/changes/events?ticket=${ticket}`);
    expect(res.status).toBe(200);
    const stream = new ChangeEventReader(res);
    await stream.until((events) => events.length === 1);
    expect(stream.events[0]).toMatchObject({ event: "changes", data: { files: [], totals: { files: 0, added: 0, removed: 0 } } });

    const turn = fixture.berth.host.prompt(session.id, [{ type: "text", text: `/write ${dir}/todo.md ship it` }]);
    await stream.until((events) => events.some((event) => event.event === "changes" && changedPaths(event).includes("todo.md")));
    expect(stream.events.at(-1)!.data).toMatchObject({ files: [{ path: "todo.md", status: "added", added: 1, removed: 0, binary: false }] });
    await turn;

    const plain = await sessionIn(fixture, tempDir("berth-review-live-plain-"));
    expect((await json(fixture.api(`/api/sessions/${plain.id}/changes/events`))).body).toMatchObject({ error: "not_a_git_repository" });
    // A rotated token ends what the old one opened, this stream too.
    const rotated = await fixture.api("/api/token/rotate", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(rotated.status).toBe(200);
    await expect(stream.until(() => false)).rejects.toThrow("the event stream ended");
  });
});

describe("review comments", () => {
  it("are added, edited and deleted, refused with the reason, kept over a restart, and sent as one prompt, then marked sent", async () => {
    const dir = changedRepository();
    let fixture = await startFixture({ workDir: dir });
    const session = await sessionIn(fixture, dir);
    const comments = `/api/sessions/${session.id}/comments`;
    const add = (value: unknown) => json<ReviewComment & { error?: string; message?: string }>(fixture.api(comments, send("POST", value)));

    const first = await add({ path: "a.txt", line: 2, side: "new", body: "why 2 and not two?" });
    expect(first).toEqual({
      status: 201,
      body: {
        id: expect.any(String),
        sessionId: session.id,
        path: "a.txt",
        line: 2,
        side: "new",
        body: "why 2 and not two?",
        createdAt: expect.any(Number),
        sentAt: null,
      },
    });
    const second = await add({ path: "gone.txt", line: 1, side: "old", body: "keep this file" });
    const third = await add({ path: "src/new.ts", line: 1, side: "new", body: "to be deleted" });
    for (const [value, status, code, message] of [
      [{ path: "same.txt", line: 1, side: "new", body: "x" }, 400, "path_not_in_changes", /"same.txt" is not among/],
      [{ path: "../a.txt", line: 1, side: "new", body: "x" }, 400, "invalid_path", /leaves the repository/],
      [{ path: "a.txt", line: 0, side: "new", body: "x" }, 400, "invalid_body", /line: line numbers start at 1/],
      [{ path: "a.txt", line: 1, side: "left", body: "x" }, 400, "invalid_body", /side: expected "new"/],
      [{ path: "a.txt", line: 1, side: "new", body: "  " }, 400, "invalid_body", /body: expected a non-empty comment/],
      [{ path: "a.txt", line: 1, side: "new", body: "x".repeat(8_193) }, 400, "invalid_body", /at most 8192 bytes/],
    ] as const) {
      const refused = await add(value);
      expect(refused.status, JSON.stringify(value).slice(0, 80)).toBe(status);
      expect(refused.body).toMatchObject({ error: code, message: expect.stringMatching(message) });
    }
    const edited = await json<ReviewComment>(fixture.api(`${comments}/${second.body.id}`, send("PATCH", { body: "keep this file, please" })));
    expect(edited).toMatchObject({ status: 200, body: { id: second.body.id, body: "keep this file, please", sentAt: null } });
    expect((await json(fixture.api(`${comments}/${third.body.id}`, { method: "DELETE" }))).status).toBe(204);
    expect(await json(fixture.api(`${comments}/${third.body.id}`, { method: "DELETE" }))).toMatchObject({
      status: 404,
      body: { error: "comment_not_found" },
    });

    // A restart keeps them.
    await fixture.stop();
    fixture = await startFixture({ dataDir: fixture.dataDir, workDir: dir });
    const kept = await json<{ comments: ReviewComment[] }>(fixture.api(comments));
    expect(kept.body.comments.map((comment) => [comment.path, comment.body, comment.sentAt])).toEqual([
      ["a.txt", "why 2 and not two?", null],
      ["gone.txt", "keep this file, please", null],
    ]);

    // While another turn runs nothing is sent, and nothing is marked.
    const sleeping = fixture.berth.host.prompt(session.id, [{ type: "text", text: "/sleep 1h" }]);
    await waitUntil(() => fixture.berth.host.getSession(session.id)?.turnActive === true, "the sleeping turn runs");
    expect(await json(fixture.api(`${comments}/send`, send("POST", {})))).toMatchObject({ status: 409, body: { error: "turn_in_flight" } });
    await fixture.berth.host.cancel(session.id);
    await sleeping;
    expect((await json<{ comments: ReviewComment[] }>(fixture.api(comments))).body.comments.map((comment) => comment.sentAt)).toEqual([null, null]);

    const sent = await json<{ comments: ReviewComment[]; prompt: string }>(fixture.api(`${comments}/send`, send("POST", {})));
    expect(sent.status).toBe(202);
    expect(sent.body.prompt).toBe(
      "Review comments on your changes:\n\na.txt:2 — why 2 and not two?\n    2 | 2\n\ngone.txt:1 (old) — keep this file, please\n    1 | bye\n",
    );
    expect(sent.body.comments.every((comment) => comment.sentAt !== null)).toBe(true);
    // One turn, its prompt journaled as any other's; the demo agent echoes what it received.
    const journal = () => fixture.berth.host.events(session.id);
    await waitUntil(() => journal().filter((event) => event.kind === "turn_ended").length === 2, "the review's turn ended");
    const turns = journal().filter((event) => event.kind === "turn_started");
    expect(turns.map((event) => event.payload)).toEqual([
      { prompt: [{ type: "text", text: "/sleep 1h" }] },
      { prompt: [{ type: "text", text: sent.body.prompt }] },
    ]);
    const echoed = journal()
      .filter((event) => event.seq > turns[1]!.seq)
      .map((event) => event.payload as { update?: { sessionUpdate: string; content?: { text?: string } } })
      .filter((payload) => payload.update?.sessionUpdate === "agent_message_chunk")
      .map((payload) => payload.update!.content!.text)
      .join("");
    expect(echoed).toBe(sent.body.prompt);

    expect(await json(fixture.api(`${comments}/${second.body.id}`, send("PATCH", { body: "too late" })))).toMatchObject({
      status: 409,
      body: { error: "comment_sent" },
    });
    expect(await json(fixture.api(`${comments}/send`, send("POST", {})))).toMatchObject({ status: 409, body: { error: "no_unsent_comments" } });
    const after = await json<{ comments: ReviewComment[] }>(fixture.api(comments));
    expect(after.body.comments.map((comment) => comment.sentAt)).toEqual([expect.any(Number), expect.any(Number)]);
  });

  it("are refused (turn_in_flight) when a turn begins while their prompt is being written, and stay unsent", async () => {
    const dir = changedRepository();
    const fixture = await startFixture({ workDir: dir });
    const session = await sessionIn(fixture, dir);
    const comments = `/api/sessions/${session.id}/comments`;
    expect((await json(fixture.api(comments, send("POST", { path: "a.txt", line: 2, side: "new", body: "why 2?" })))).status).toBe(201);
    // Writing the prompt reads a.txt through git, whose clean filter holds it until told to go: the gap a turn begins in.
    const gate = tempDir("berth-review-gate-");
    const [reading, go] = [join(gate, "reading"), join(gate, "go")];
    gitIn(dir, "config", "filter.gate.clean", `touch '${reading}'; while [ ! -e '${go}' ]; do sleep 0.05; done; cat`);
    writeFileSync(join(dir, ".git", "info", "attributes"), "a.txt filter=gate\n");
    try {
      const sending = json(fixture.api(`${comments}/send`, send("POST", {})));
      await waitUntil(() => existsSync(reading), "the comments' prompt is being written");
      const sleeping = fixture.berth.host.prompt(session.id, [{ type: "text", text: "/sleep 1h" }]);
      await waitUntil(() => fixture.berth.host.getSession(session.id)?.turnActive === true, "the sleeping turn runs");
      writeFileSync(go, "");
      expect(await sending).toMatchObject({ status: 409, body: { error: "turn_in_flight" } });
      await fixture.berth.host.cancel(session.id);
      await sleeping;
    } finally {
      writeFileSync(go, "");
    }
    expect((await json<{ comments: ReviewComment[] }>(fixture.api(comments))).body.comments.map((comment) => comment.sentAt)).toEqual([null]);
    const started = fixture.berth.host.events(session.id).filter((event) => event.kind === "turn_started");
    expect(started.map((event) => event.payload)).toEqual([{ prompt: [{ type: "text", text: "/sleep 1h" }] }]);
  });
});
