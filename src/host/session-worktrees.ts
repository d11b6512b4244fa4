import { randomUUID } from "node:crypto";
import { dataPaths } from "../config/paths.js";
import { TurnAlreadyRunningError } from "../lifecycle/executions.js";
import type { Session } from "../store/sessions.js";
import { runProjectStep, type ProjectStep, type StepOutcome } from "../worktrees/project-command.js";
import { createWorktree, removeWorktree, type WorktreeRequest } from "../worktrees/worktree-creation.js";
import { discardWorktree } from "../worktrees/worktree-discarding.js";
import { WorktreeError } from "../worktrees/worktree-errors.js";
import { landWorktree } from "../worktrees/worktree-landing.js";
import { worktreeOf, type Worktree } from "../worktrees/worktree.js";
import type { HostParts } from "./host-composition.js";
import type { NewSessionParams } from "./session-catalog.js";
import { deleteSession, stopSessionAgent } from "./session-deletion.js";
import { locationOf } from "./session-location.js";
import { projectScriptPlan } from "./session-sandbox.js";

type WorktreeParts = Pick<
  HostParts,
  | "config"
  | "dataDir"
  | "registry"
  | "sandboxes"
  | "catalog"
  | "clock"
  | "journal"
  | "store"
  | "executions"
  | "desk"
  | "holds"
  | "children"
  | "records"
  | "sessionChanges"
>;

/**
 * A new session in a git worktree of its own (docs/worktrees.md): the worktree is made, the session stored with it as
 * its cwd, then the project's setup runs there (journaled as a tool call). If any step fails nothing is left behind:
 * no session, no worktree, no branch.
 */
export async function createWorktreeSession(
  parts: WorktreeParts,
  params: NewSessionParams,
  request: WorktreeRequest,
  title?: string,
): Promise<string> {
  // An unknown agent is refused before anything is made.
  parts.catalog.agentOf(params);
  const id = randomUUID();
  const root = parts.config.worktrees.root ?? dataPaths(parts.dataDir).worktrees;
  const worktree = await createWorktree(request, { cwd: params.cwd, root, sessionId: id, now: parts.clock.now(), ...(title ? { title } : {}) });
  try {
    await parts.catalog.create({ ...params, cwd: worktree.path }, { id, worktree });
  } catch (error) {
    await removeWorktree(worktree);
    throw error;
  }
  const setup = await runSetup(parts, id, worktree.path).catch(async (error: unknown) => {
    await deleteWithWorktree(parts, id, worktree);
    throw error;
  });
  if (setup?.failure) {
    await deleteWithWorktree(parts, id, worktree);
    throw new WorktreeError("setup_failed", `the worktree's setup (${setup.command}) ${setup.failure}: nothing was kept`, { output: setup.output });
  }
  if (setup) {
    journalStep(parts, parts.catalog.require(id), "setup", setup);
    // Whoever reads the new session's journal next finds the setup in it.
    await parts.journal.committed();
  }
  return id;
}

/** The project's setup in the new worktree: the repository's own script in the session's sandbox, when it has one. */
async function runSetup(parts: WorktreeParts, sessionId: string, path: string): Promise<StepOutcome | undefined> {
  const { setup, timeout } = parts.config.worktrees;
  return runProjectStep("setup", path, setup, timeout, projectScriptPlan(parts.sandboxes, parts.registry, parts.catalog.require(sessionId)));
}

/**
 * Lands the session's worktree (docs/worktrees.md, "Land"): refused while a turn runs; the check, the commit and the
 * merge are `landWorktree`'s. Once merged, the session's agent is stopped before the worktree is removed.
 */
export function landSession(parts: WorktreeParts, sessionId: string, message: string | undefined): Promise<Worktree> {
  return closing(parts, sessionId, async ({ session, worktree }) => {
    const merged = await landWorktree(worktree, {
      message: message ?? session.title ?? `Berth session ${sessionId}`,
      check: parts.config.worktrees.check,
      timeoutMs: parts.config.worktrees.timeout,
      merge: parts.config.worktrees.merge,
      checked: (outcome) => journalStep(parts, session, "check", outcome),
      sandbox: projectScriptPlan(parts.sandboxes, parts.registry, session),
      // Landed or refused, the check is in the journal by the time the answer is read.
    }).finally(() => parts.journal.committed());
    await stopAgent(parts, sessionId);
    await removeWorktree(merged);
    return merged;
  });
}

/** Throws the session's worktree and branch away (docs/worktrees.md, "Discard"): refused while a turn runs. */
export function discardSession(parts: WorktreeParts, sessionId: string): Promise<Worktree> {
  return closing(parts, sessionId, async ({ worktree }) => {
    await stopAgent(parts, sessionId);
    return discardWorktree(worktree);
  });
}

/** Sessions whose worktree is being landed or discarded: one at a time, a second request is refused. */
const beingClosed = new Set<string>();

/** Runs `close` on the session's active worktree, alone; stores the worktree as it ends. */
async function closing(
  parts: WorktreeParts,
  sessionId: string,
  close: (active: { session: Session; worktree: Worktree }) => Promise<Worktree>,
): Promise<Worktree> {
  const active = activeWorktree(parts, sessionId);
  if (beingClosed.has(sessionId)) throw new WorktreeError("worktree_busy", `session "${sessionId}"'s worktree is being landed or discarded already`);
  beingClosed.add(sessionId);
  try {
    return stored(parts, sessionId, await close(active));
  } finally {
    beingClosed.delete(sessionId);
  }
}

/** The session, with its worktree if it is active and no turn runs; else a refusal naming why not. */
function activeWorktree(parts: WorktreeParts, sessionId: string): { session: Session; worktree: Worktree } {
  const session = parts.catalog.require(sessionId);
  const worktree = worktreeOf(session.worktree);
  if (!worktree) throw new WorktreeError("not_a_worktree_session", `session "${sessionId}" works in a plain directory, not a worktree of its own`);
  if (worktree.state !== "active") throw new WorktreeError("worktree_closed", `session "${sessionId}"'s worktree was ${worktree.state} already`);
  if (parts.executions.isActive(sessionId)) throw new TurnAlreadyRunningError(sessionId);
  return { session, worktree };
}

/** No agent may go on writing into a directory about to go: a turn begun meanwhile is interrupted, the holds released, the agent stopped. */
async function stopAgent(parts: WorktreeParts, sessionId: string): Promise<void> {
  await parts.executions.interrupt(sessionId, { reason: "user", awaitSettlement: true });
  await stopSessionAgent(parts, sessionId, "worktree_closed");
}

function stored(parts: WorktreeParts, sessionId: string, worktree: Worktree): Worktree {
  parts.journal.setSession(sessionId, { worktree });
  parts.sessionChanges.emit(sessionId);
  return worktree;
}

/** The setup's or check's output in the conversation, as a tool call of kind `execute`, so every client shows it. */
function journalStep(parts: WorktreeParts, session: Session, step: ProjectStep, outcome: StepOutcome): void {
  parts.journal.update(session.id, locationOf(session), {
    sessionUpdate: "tool_call",
    toolCallId: `berth-${step}-${randomUUID()}`,
    title: `${step === "setup" ? "Worktree setup" : "Check before landing"}: ${outcome.command}`,
    kind: "execute",
    status: outcome.failure ? "failed" : "completed",
    content: [{ type: "content", content: { type: "text", text: outcome.output === "" ? "(no output)" : outcome.output } }],
    rawOutput: { exitCode: outcome.exitCode },
  });
}

async function deleteWithWorktree(parts: WorktreeParts, sessionId: string, worktree: Worktree): Promise<void> {
  await deleteSession(parts, sessionId);
  await removeWorktree(worktree);
}
