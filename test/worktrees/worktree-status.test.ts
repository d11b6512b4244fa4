import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import type { WorktreeStatusView } from "../../src/host/worktree-status.js";
import { cleanUp, startFixture, tempDir, type BerthFixture } from "../server/server-harness.js";
import { commitFile, gitIn, initRepository } from "../git/git-repository.js";

afterEach(cleanUp);

async function created(berth: BerthFixture, body: object): Promise<SessionView> {
  const response = await berth.api("/api/sessions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as SessionView;
}

async function status(berth: BerthFixture, sessionId: string): Promise<WorktreeStatusView> {
  const response = await berth.api(`/api/sessions/${sessionId}/worktree`);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as WorktreeStatusView;
}

describe("GET /api/sessions/:id/worktree", () => {
  it("counts the branch's commits ahead, the base's behind and the uncommitted files; ready to review once the turn ended with changes", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-") } } });
    const session = await created(berth, { cwd: repository, worktree: true, title: "Count me" });
    expect(await status(berth, session.id)).toEqual({ ahead: 0, behind: 0, uncommitted: 0, readyToReview: false });

    const client = await berth.connect();
    await client.load(session.id, session.cwd);
    expect((await client.prompt(session.id, `/write ${session.cwd}/note.txt a note`)).stopReason).toBe("end_turn");
    expect(await status(berth, session.id)).toEqual({ ahead: 0, behind: 0, uncommitted: 1, readyToReview: true });

    gitIn(session.cwd, "add", "-A");
    gitIn(session.cwd, "commit", "--quiet", "-m", "a note");
    commitFile(repository, "base.txt", "the base moved\n");
    commitFile(repository, "more.txt", "and again\n");
    expect(await status(berth, session.id)).toEqual({ ahead: 1, behind: 2, uncommitted: 0, readyToReview: true });
  });

  it("refuses a plain session and a closed worktree by name; an unknown session is 404", async () => {
    const repository = initRepository(tempDir("berth-wt-repo-"));
    const berth = await startFixture({ config: { worktrees: { root: tempDir("berth-wt-root-") } } });
    const plain = await created(berth, { cwd: repository });
    const plainAnswer = await berth.api(`/api/sessions/${plain.id}/worktree`);
    expect(plainAnswer.status).toBe(409);
    expect(await plainAnswer.json()).toMatchObject({ error: "not_a_worktree_session" });

    const session = await created(berth, { cwd: repository, worktree: true });
    expect((await berth.api(`/api/sessions/${session.id}/discard`, { method: "POST" })).status).toBe(200);
    const closed = await berth.api(`/api/sessions/${session.id}/worktree`);
    expect(closed.status).toBe(409);
    expect(await closed.json()).toMatchObject({ error: "worktree_closed", message: expect.stringContaining("discarded") });

    expect((await berth.api("/api/sessions/no-such-session/worktree")).status).toBe(404);
  });
});
