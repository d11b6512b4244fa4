import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { methods } from "@agentclientprotocol/sdk";
import { cleanUp, startFixture, tempDir, waitUntil, waitUntilGone, type BerthFixture } from "../server/server-harness.js";
import { commitFile, gitIn, initRepository } from "../git/git-repository.js";

afterEach(cleanUp);

async function createSession(berth: BerthFixture, body: object): Promise<Response> {
  return berth.api("/api/sessions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

async function created(berth: BerthFixture, body: object): Promise<SessionView> {
  const response = await createSession(berth, body);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as SessionView;
}

async function post(berth: BerthFixture, path: string, body?: object): Promise<Response> {
  return berth.api(path, {
    method: "POST",
    ...(body ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}),
  });
}

function branches(repository: string): string[] {
  return gitIn(repository, "branch", "--format=%(refname:short)").split("\n").sort();
}

describe("sessions in git worktrees of their own", () => {
  it("two sessions write in parallel worktrees: neither sees the other's file, the main checkout is untouched; landing merges one", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const root = tempDir("berth-wt-root-");
    const berth = await startFixture({ config: { worktrees: { root } } });
    const first = await created(berth, { cwd: repository, worktree: true, title: "Fix the login page" });
    const client = await berth.connect();
    const second = await client.newSession(repository, { "berth/worktree": { branch: "second-try" } });
    const secondView = (await (await berth.api(`/api/sessions/${second}`)).json()) as SessionView;

    expect(first.worktree).toMatchObject({ repository, branch: "berth/fix-the-login-page", base: "main", state: "active" });
    expect(first.worktree!.baseCommit).toBe(gitIn(repository, "rev-parse", "main"));
    expect(first.cwd).toBe(first.worktree!.path);
    expect(first.cwd.startsWith(`${root}/`)).toBe(true);
    expect(secondView.worktree).toMatchObject({ repository, branch: "second-try", state: "active" });
    expect(secondView.cwd).toBe(secondView.worktree!.path);

    await client.load(first.id, first.cwd);
    expect((await client.prompt(first.id, `/write ${first.cwd}/one.txt from the first`)).stopReason).toBe("end_turn");
    expect((await client.prompt(second, `/write ${secondView.cwd}/two.txt from the second`)).stopReason).toBe("end_turn");
    expect(readFileSync(join(first.cwd, "one.txt"), "utf8")).toBe("from the first");
    expect(existsSync(join(first.cwd, "two.txt"))).toBe(false);
    expect(existsSync(join(secondView.cwd, "one.txt"))).toBe(false);
    expect(gitIn(repository, "status", "--porcelain")).toBe("");

    const landing = await post(berth, `/api/sessions/${first.id}/land`, { message: "One file" });
    expect(landing.status, await landing.clone().text()).toBe(200);
    const landed = (await landing.json()) as SessionView;
    expect(landed.worktree).toMatchObject({ state: "landed", landedCommit: gitIn(repository, "rev-parse", "main") });
    expect(readFileSync(join(repository, "one.txt"), "utf8")).toBe("from the first");
    expect(gitIn(repository, "log", "--format=%s", "main~1..main^2")).toBe("One file");
    expect(existsSync(first.cwd)).toBe(false);
    expect(branches(repository)).toEqual(["main", "second-try"]);
    expect(gitIn(repository, "status", "--porcelain")).toBe("");
    // Landed once: a second landing is refused, naming why.
    const again = await post(berth, `/api/sessions/${first.id}/land`);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: "worktree_closed" });
  });

  it("a failing check refuses the landing with its output, journaled; nothing is merged", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    mkdirSync(join(repository, ".berth"));
    writeFileSync(
      join(repository, ".berth", "check"),
      '#!/bin/sh\necho "checking $(ls)"\ntest -f ok.txt || { echo "ok.txt is missing" >&2; exit 3; }\n',
    );
    chmodSync(join(repository, ".berth", "check"), 0o755);
    commitFile(repository, ".berth/check", readFileSync(join(repository, ".berth", "check"), "utf8"));
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-") } } });
    const session = await created(berth, { cwd: repository, worktree: {} });
    const before = gitIn(repository, "rev-parse", "main");

    const refused = await post(berth, `/api/sessions/${session.id}/land`);
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as { error: string; message: string; output: string };
    expect(body.error).toBe("check_failed");
    expect(body.message).toMatch(/\.berth\/check.*exit code 3/);
    expect(body.output).toContain("ok.txt is missing");
    expect(gitIn(repository, "rev-parse", "main")).toBe(before);
    expect(existsSync(session.cwd)).toBe(true);
    const events = (await (await berth.api(`/api/sessions/${session.id}/events`)).json()) as {
      events: { payload: { update: Record<string, unknown> } }[];
    };
    const calls = events.events.map((event) => event.payload.update).filter((update) => update.sessionUpdate === "tool_call");
    expect(calls).toEqual([expect.objectContaining({ kind: "execute", status: "failed", title: "Check before landing: .berth/check" })]);
    expect(JSON.stringify(calls[0]!.content)).toContain("ok.txt is missing");

    writeFileSync(join(session.cwd, "ok.txt"), "fine\n");
    const landing = await post(berth, `/api/sessions/${session.id}/land`);
    expect(landing.status, await landing.clone().text()).toBe(200);
    expect(existsSync(join(repository, "ok.txt"))).toBe(true);
  });

  it("a check that outlives worktrees.timeout is stopped, its whole process group, and the landing refused", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const marks = tempDir("berth-wt-marks-");
    // A child of the check that would outlive it, unless its group is killed.
    const check = `echo started; (sleep 60; touch ${marks}/survived) & echo $! > ${marks}/child; wait`;
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-"), check, timeout: "1s" } } });
    const session = await created(berth, { cwd: repository, worktree: true });
    const refused = await post(berth, `/api/sessions/${session.id}/land`);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: "check_failed",
      message: `the check (${check}) did not end within 1s (worktrees.timeout) and was stopped: nothing was merged`,
      output: "started\n",
    });
    const child = Number(readFileSync(join(marks, "child"), "utf8"));
    expect(await waitUntilGone([child])).toEqual([]);
  });

  it("a conflict is reported with its files and the main checkout stays clean; discard removes the worktree and its branch", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-") } } });
    const session = await created(berth, { cwd: repository, worktree: { branch: "clash" } });
    writeFileSync(join(session.cwd, "README.md"), "the session's words\n");
    commitFile(repository, "README.md", "the main checkout's words\n");
    const head = gitIn(repository, "rev-parse", "main");

    const refused = await post(berth, `/api/sessions/${session.id}/land`);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: "merge_conflict", files: ["README.md"] });
    expect(gitIn(repository, "rev-parse", "main")).toBe(head);
    expect(gitIn(repository, "status", "--porcelain")).toBe("");
    expect(readFileSync(join(repository, "README.md"), "utf8")).toBe("the main checkout's words\n");

    const discarded = await post(berth, `/api/sessions/${session.id}/discard`);
    expect(discarded.status, await discarded.clone().text()).toBe(200);
    expect(((await discarded.json()) as SessionView).worktree).toMatchObject({ state: "discarded" });
    expect(existsSync(session.cwd)).toBe(false);
    expect(branches(repository)).toEqual(["main"]);
    expect(
      gitIn(repository, "worktree", "list", "--porcelain")
        .split("\n")
        .filter((line) => line.startsWith("worktree ")),
    ).toEqual([`worktree ${repository}`]);
  });

  it("a host restarted keeps its worktree sessions and their records", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const dataDir = tempDir("berth-wt-data-");
    const first = await startFixture({ dataDir });
    const session = await created(first, { cwd: repository, worktree: true });
    expect(session.worktree!.path.startsWith(join(dataDir, "worktrees"))).toBe(true);
    await first.stop();

    const second = await startFixture({ dataDir });
    const after = (await (await second.api(`/api/sessions/${session.id}`)).json()) as SessionView;
    expect(after.worktree).toEqual(session.worktree);
    expect(existsSync(session.cwd)).toBe(true);
    const discarded = await post(second, `/api/sessions/${session.id}/discard`);
    expect(discarded.status).toBe(200);
    expect(existsSync(session.cwd)).toBe(false);
  });

  it("bad requests are refused naming what was wrong, and leave nothing behind", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const plain = tempDir("berth-wt-plain-");
    const root = tempDir("berth-wt-root-");
    const berth = await startFixture({ config: { worktrees: { root } } });
    gitIn(repository, "branch", "taken");

    const cases: [object, number, string, RegExp][] = [
      [{ cwd: plain, worktree: true }, 400, "not_a_git_repository", /is not in a git repository/],
      [{ cwd: repository, worktree: { base: "nope" } }, 400, "unknown_base", /no branch "nope"/],
      [{ cwd: repository, worktree: { branch: "taken" } }, 400, "branch_exists", /branch "taken" already/],
      [{ cwd: repository, worktree: { branch: "bad..name" } }, 400, "invalid_worktree", /"bad\.\.name" is not a valid branch name/],
      [{ cwd: repository, worktree: { repository: "relative/path" } }, 400, "invalid_worktree", /absolute path/],
      [{ cwd: repository, worktree: { colour: "blue" } }, 400, "invalid_body", /worktree/],
    ];
    for (const [body, status, code, message] of cases) {
      const response = await createSession(berth, body);
      const answer = (await response.json()) as { error: string; message: string };
      expect({ status: response.status, error: answer.error }, answer.message).toEqual({ status, error: code });
      expect(answer.message).toMatch(message);
    }
    const plainSession = await created(berth, { cwd: plain });
    expect(plainSession.worktree).toBeNull();
    const notWorktree = await post(berth, `/api/sessions/${plainSession.id}/discard`);
    expect(notWorktree.status).toBe(409);
    expect(await notWorktree.json()).toMatchObject({ error: "not_a_worktree_session" });

    const client = await berth.connect();
    await expect(client.newSession(repository, { "berth/worktree": { base: "nope" } })).rejects.toMatchObject({
      code: -32602,
      data: { code: "unknown_base" },
    });
    await expect(client.newSession(repository, { "berth/worktree": "yes" })).rejects.toMatchObject({ code: -32602 });
    // Only the plain session was made: no worktree, no branch.
    expect(((await (await berth.api("/api/sessions")).json()) as { sessions: SessionView[] }).sessions).toHaveLength(1);
    expect(branches(repository)).toEqual(["main", "taken"]);
    expect(gitIn(repository, "worktree", "list").split("\n")).toHaveLength(1);
  });

  it("a worktree session's changes are against its base: its own commits count, the base's later commits do not; landed, refused naming the commit", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-") } } });
    const session = await created(berth, { cwd: repository, worktree: true, title: "Notes" });
    const client = await berth.connect();
    await client.load(session.id, session.cwd);
    expect((await client.prompt(session.id, `/write ${session.cwd}/notes.txt written by the agent`)).stopReason).toBe("end_turn");
    // Committed in the worktree (as the agent may), and the main checkout moves on meanwhile.
    gitIn(session.cwd, "add", "notes.txt");
    gitIn(session.cwd, "commit", "--quiet", "-m", "Notes");
    commitFile(repository, "later.txt", "on main after the worktree was made\n");

    const changes = await berth.api(`/api/sessions/${session.id}/changes`);
    expect(changes.status, await changes.clone().text()).toBe(200);
    expect(await changes.json()).toMatchObject({
      base: session.worktree!.baseCommit,
      files: [{ path: "notes.txt", status: "added", added: 1, removed: 0 }],
    });
    const file = await berth.api(`/api/sessions/${session.id}/changes/file?path=notes.txt`);
    expect(await file.json()).toMatchObject({ path: "notes.txt", oldText: null, newText: "written by the agent" });
    const comment = await post(berth, `/api/sessions/${session.id}/comments`, { path: "notes.txt", line: 1, side: "new", body: "say more" });
    expect(comment.status, await comment.clone().text()).toBe(201);
    const notOurs = await post(berth, `/api/sessions/${session.id}/comments`, { path: "later.txt", line: 1, side: "new", body: "not the session's" });
    expect(await notOurs.json()).toMatchObject({ error: "path_not_in_changes" });

    const landed = (await (await post(berth, `/api/sessions/${session.id}/land`)).json()) as SessionView;
    const after = await berth.api(`/api/sessions/${session.id}/changes`);
    expect(after.status).toBe(409);
    expect(await after.json()).toMatchObject({
      error: "worktree_closed",
      message: `session "${session.id}"'s worktree was landed into main at commit ${landed.worktree!.landedCommit} of ${repository}, and its directory removed: its changes are in main now`,
    });
  });

  it("a failing setup fails the creation with its output and leaves nothing; a passing one is journaled before the agent starts", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const berth = await startFixture({
      config: { worktrees: { root: tempDir("berth-wt-root-"), setup: "echo preparing; test -f go || { echo no go >&2; exit 2; }" } },
    });
    const refused = await createSession(berth, { cwd: repository, worktree: true });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "setup_failed", output: "preparing\nno go\n" });
    expect(((await (await berth.api("/api/sessions")).json()) as { sessions: SessionView[] }).sessions).toEqual([]);
    expect(branches(repository)).toEqual(["main"]);
    expect(gitIn(repository, "worktree", "list").split("\n")).toHaveLength(1);

    commitFile(repository, "go", "yes\n");
    const session = await created(berth, { cwd: repository, worktree: true });
    const events = (await (await berth.api(`/api/sessions/${session.id}/events`)).json()) as {
      events: { payload: { update: Record<string, unknown> } }[];
    };
    expect(events.events.map((event) => event.payload.update)).toEqual([
      expect.objectContaining({
        sessionUpdate: "tool_call",
        kind: "execute",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "preparing\n" } }],
      }),
    ]);
  });

  it("one landing or discarding at a time, none while a turn runs", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const marks = tempDir("berth-wt-marks-");
    // The check says it started, then waits until the test lets it finish.
    const check = `touch ${marks}/started; while [ ! -f ${marks}/go ]; do sleep 0.05; done`;
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-"), check } } });
    const session = await created(berth, { cwd: repository, worktree: true });

    const landing = post(berth, `/api/sessions/${session.id}/land`);
    await waitUntil(() => existsSync(join(marks, "started")), "the check started");
    const second = await post(berth, `/api/sessions/${session.id}/discard`);
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: "worktree_busy" });
    writeFileSync(join(marks, "go"), "");
    expect((await landing).status).toBe(200);

    const busy = await created(berth, { cwd: repository, worktree: true });
    const client = await berth.connect();
    await client.load(busy.id, busy.cwd);
    const turn = client.prompt(busy.id, "/sleep 10m");
    await waitUntil(() => berth.berth.host.getSession(busy.id)!.turnActive, "the turn runs");
    const refused = await post(berth, `/api/sessions/${busy.id}/discard`);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: "turn_in_flight" });
    expect(existsSync(busy.cwd)).toBe(true);
    await client.agent.notify(methods.agent.session.cancel, { sessionId: busy.id });
    expect((await turn).stopReason).toBe("cancelled");
    const discarded = await post(berth, `/api/sessions/${busy.id}/discard`);
    expect(discarded.status).toBe(200);
    expect(existsSync(busy.cwd)).toBe(false);
  });
});

describe('ACP session/new\'s _meta["berth/title"]', () => {
  it("names the session and so its worktree's branch; a title that is no string is refused by name", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-") } } });
    const client = await berth.connect();
    const id = await client.newSession(repository, { "berth/worktree": true, "berth/title": "Name the branch" });
    const view = (await (await berth.api(`/api/sessions/${id}`)).json()) as SessionView;
    expect(view.title).toBe("Name the branch");
    expect(view.worktree).toMatchObject({ branch: "berth/name-the-branch", state: "active" });
    await expect(client.newSession(repository, { "berth/title": 5 })).rejects.toThrow(/berth\/title/);
  });
});
