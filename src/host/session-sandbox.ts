import type { AgentRegistry } from "../agents/agent-registry.js";
import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { storedPolicy } from "../sandbox/policy.js";
import type { Sandboxes, SandboxSubject, SandboxView } from "../sandbox/sandboxes.js";
import type { Session } from "../store/sessions.js";
import { worktreeOf } from "../worktrees/worktree.js";
import { agentRequestOf } from "./agent-request.js";

type Stored = Pick<Session, "agent" | "cwd" | "agentRequest" | "worktree">;

/** A stored session's sandbox: the policy kept with it, else (older than sandboxes) the configured one (agent, location). */
export function sandboxPolicyOf(sandboxes: Sandboxes, session: Stored): SandboxPolicy {
  return sandboxes.policyOf(session.agent, sandboxLocationOf(session), storedPolicy(agentRequestOf(session.agentRequest).sandbox));
}

/** The plan the session's agent child starts with; throws when the policy asks for a sandbox this machine cannot run. */
export function agentSandboxPlan(sandboxes: Sandboxes, session: Stored, command: string): SandboxPlan | undefined {
  return sandboxes.agentPlan(sandboxPolicyOf(sandboxes, session), {
    directory: session.cwd,
    location: sandboxLocationOf(session),
    agentId: session.agent,
    command,
  });
}

/**
 * The plan the repository's own scripts of the session (`.berth/setup`, `.berth/check`) run in: its agent's, since the
 * agent may have written them. Undefined when unsandboxed; throws, never runs them unsandboxed, without bubblewrap.
 */
export function projectScriptPlan(sandboxes: Sandboxes, registry: AgentRegistry, session: Stored): SandboxPlan | undefined {
  return sandboxes.agentPlan(sandboxPolicyOf(sandboxes, session), subjectOf(registry, session));
}

/** The session view's `sandbox`. */
export function sandboxViewOf(sandboxes: Sandboxes, registry: AgentRegistry, session: Stored): SandboxView | null {
  return sandboxes.view(sandboxPolicyOf(sandboxes, session), subjectOf(registry, session));
}

function subjectOf(registry: AgentRegistry, session: Stored): SandboxSubject {
  let command = "";
  try {
    command = registry.resolve(session.agent).command;
  } catch {
    // An agent removed since: its id alone picks its state directories.
  }
  return { directory: session.cwd, location: sandboxLocationOf(session), agentId: session.agent, command };
}

/**
 * Where `sandbox.locations` looks for the session: the repository a worktree session was made from (its worktree lies
 * in Berth's data directory, in no configured location), else its directory.
 */
function sandboxLocationOf(session: Pick<Session, "cwd" | "worktree">): string {
  return worktreeOf(session.worktree)?.repository ?? session.cwd;
}
