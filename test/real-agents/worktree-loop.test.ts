import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ChangeSet } from "../../src/changes/change-set.js";
import type { ChangedFileView } from "../../src/changes/changed-file.js";
import type { SessionView } from "../../src/host/views.js";
import type { ReviewComment } from "../../src/store/review-comments.js";
import { gitIn, initRepository } from "../git/git-repository.js";
import { opencode } from "./whole-turns/agents/opencode.js";
import { toolCalls, useDataDir, useWorld } from "./whole-turns/scenarios.js";

/**
 * One whole worktree loop with a real agent (docs/worktrees.md, docs/review.md): opencode, run by a
 * real `berth serve` against the scripted model endpoint, works in a session of its own worktree of
 * a real git repository. Its edit shows among the session's changes; a review comment sent to it
 * reaches the model in the agent's next request and makes it edit again; the landing, behind a
 * passing check, merges the final file into the main checkout and removes the worktree and branch.
 */

const file = "greeting.txt";
const written = "Hello\nfrom the agent\n";
const edited = "Hello\nfrom the agent, reviewed\n";
const commentBody = "Say that it was reviewed";

describe.skipIf(!opencode.available())(
  `opencode in a worktree session: edit, review, comment, land${opencode.available() ? "" : ` (skipped: ${opencode.unavailableReason})`}`,
  // Bounds, not expectations: a real agent on a loaded 2-core machine takes seconds per step.
  { timeout: 240_000 },
  () => {
    const world = useWorld(opencode, useDataDir(opencode));

    it("opencode's edit is among the changes; a sent comment reaches its model and is acted on; landing merges the final file", async () => {
      const w = world();
      // The repository is the world's cwd, with opencode's config (opencode.json) committed, so the
      // worktree has it too; and a check that passes only once the comment was acted on.
      const repository = initRepository(w.cwd);
      mkdirSync(join(repository, ".berth"));
      writeFileSync(join(repository, ".berth", "check"), `#!/bin/sh\ngrep -q reviewed ${file}\n`);
      chmodSync(join(repository, ".berth", "check"), 0o755);
      gitIn(repository, "add", "-A");
      gitIn(repository, "commit", "--quiet", "-m", "a check before landing");
      const baseCommit = gitIn(repository, "rev-parse", "main");

      const client = await w.connect();
      const sessionId = await client.newSession(repository, { "berth/worktree": { branch: "greeting" } });
      const created = await w.session(sessionId);
      expect(created.worktree).toMatchObject({ repository, branch: "greeting", base: "main", baseCommit, state: "active" });
      const worktree = created.worktree!.path;
      expect(created.cwd).toBe(worktree);

      const tag = w.play([
        { text: "Writing the greeting.", toolCalls: [opencode.writeTool(join(worktree, file), written)] },
        { text: "Written." },
        {
          text: "Acting on the review.",
          toolCalls: [
            { name: "edit", input: { filePath: join(worktree, file), oldString: "from the agent", newString: "from the agent, reviewed" } },
          ],
        },
        { text: "Reviewed." },
      ]);

      // 1. A prompt: opencode writes the file with its own tool, in the worktree.
      const first = await client.prompt(sessionId, `${tag} write the greeting`);
      expect(first.stopReason).toBe("end_turn");
      expect(toolCalls(client, sessionId).map((c) => c.status)).toEqual(["completed"]);
      expect(readFileSync(join(worktree, file), "utf8")).toBe(written);

      // 2. The changes over REST: the file with its counts and texts; the main checkout untouched.
      const changes = await w.api<ChangeSet>(`/api/sessions/${sessionId}/changes`);
      expect(changes.base).toBe(baseCommit);
      expect(changes.files).toEqual([{ path: file, status: "added", added: 2, removed: 0, binary: false }]);
      const one = await w.api<ChangedFileView>(`/api/sessions/${sessionId}/changes/file?path=${file}`);
      expect(one).toMatchObject({ path: file, status: "added", oldText: null, newText: written });
      expect(one.patch).toContain("+from the agent\n");
      expect(existsSync(join(repository, file))).toBe(false);
      expect(gitIn(repository, "status", "--porcelain")).toBe("");
      expect(gitIn(repository, "rev-parse", "main")).toBe(baseCommit);

      // 3. A comment on line 2, sent: the model receives it in one prompt, and its reply edits the file.
      const comment = await w.api<ReviewComment>(
        `/api/sessions/${sessionId}/comments`,
        { method: "POST", body: JSON.stringify({ path: file, line: 2, side: "new", body: commentBody }) },
        201,
      );
      expect(comment).toMatchObject({ path: file, line: 2, sentAt: null });
      const sent = await w.api<{ prompt: string }>(`/api/sessions/${sessionId}/comments/send`, { method: "POST" }, 202);
      expect(sent.prompt).toContain(`${file}:2 — ${commentBody}`);
      await w.waitFor("the review's turn ended", async () => {
        const view = await w.session(sessionId);
        return !view.turnActive && client.texts(sessionId).endsWith("Reviewed.");
      });
      const requests = w.requestsOf(tag);
      expect(requests).toHaveLength(4);
      // The request that got the edit carried the comment, as the last user message: one prompt.
      expect(requests[2]!.lastUserText).toContain(`${file}:2 — ${commentBody}`);
      expect(requests[2]!.lastUserText).toContain("2 | from the agent");
      expect(requests.slice(0, 2).some((r) => JSON.stringify(r.raw).includes(commentBody))).toBe(false);
      expect(toolCalls(client, sessionId).map((c) => c.status)).toEqual(["completed", "completed"]);
      expect(readFileSync(join(worktree, file), "utf8")).toBe(edited);
      // Both by opencode's own file tools, not a shell command.
      const kinds = client.notifications.flatMap(({ update }) => (update.sessionUpdate === "tool_call" ? [update.kind] : []));
      expect(kinds).toEqual(["edit", "edit"]);

      // 4. The changes show the second edit; landing, behind the passing check, merges it.
      const after = await w.api<ChangedFileView>(`/api/sessions/${sessionId}/changes/file?path=${file}`);
      expect(after).toMatchObject({ status: "added", oldText: null, newText: edited });
      const landed = await w.api<SessionView>(`/api/sessions/${sessionId}/land`, {
        method: "POST",
        body: JSON.stringify({ message: "A reviewed greeting" }),
      });
      const landedCommit = gitIn(repository, "rev-parse", "main");
      expect(landed.worktree).toMatchObject({ state: "landed", landedCommit });
      expect(gitIn(repository, "show", `main:${file}`)).toBe(edited.trimEnd());
      expect(readFileSync(join(repository, file), "utf8")).toBe(edited);
      expect(gitIn(repository, "log", "--format=%s", "main").split("\n")).toEqual([
        "Merge branch 'greeting'",
        "A reviewed greeting",
        "a check before landing",
        "base",
      ]);
      // The landing's commit holds the agent's file and nothing else of the worktree.
      expect(gitIn(repository, "diff", "--name-only", baseCommit, "main")).toBe(file);
      const events = await w.api<{ events: { payload: { update?: { sessionUpdate: string; title?: string; status?: string } } }[] }>(
        `/api/sessions/${sessionId}/events`,
      );
      const check = events.events.map((e) => e.payload.update).filter((u) => u?.sessionUpdate === "tool_call" && u.title?.startsWith("Check before"));
      expect(check).toEqual([expect.objectContaining({ title: "Check before landing: .berth/check", status: "completed" })]);
      expect(existsSync(worktree)).toBe(false);
      expect(gitIn(repository, "branch", "--format=%(refname:short)")).toBe("main");
      expect(
        gitIn(repository, "worktree", "list", "--porcelain")
          .split("\n")
          .filter((l) => l.startsWith("worktree ")),
      ).toEqual([`worktree ${repository}`]);
      expect(gitIn(repository, "status", "--porcelain")).toBe("");
    });
  },
);
