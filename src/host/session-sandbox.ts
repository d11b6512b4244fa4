import type { AgentRegistry } from "../agents/agent-registry.js";
import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { storedPolicy } from "../sandbox/policy.js";
import type { Sandboxes, SandboxSubject, SandboxView } from "../sandbox/sandboxes.js";
import type { Session } from "../store/sessions.js";
import { agentRequestOf } from "./agent-request.js";

type Stored = Pick<Session, "agent" | "cwd" | "agentRequest">;

/** A stored session's sandbox: the policy kept with it, else (older than sandboxes) its agent's configured one. */
export function sandboxPolicyOf(sandboxes: Sandboxes, session: Stored): SandboxPolicy {
  return sandboxes.policyOf(session.agent, storedPolicy(agentRequestOf(session.agentRequest).sandbox));
}

/** The plan the session's agent child starts with; throws when the policy asks for a sandbox this machine cannot run. */
export function agentSandboxPlan(sandboxes: Sandboxes, session: Stored, command: string): SandboxPlan | undefined {
  return sandboxes.agentPlan(sandboxPolicyOf(sandboxes, session), { directory: session.cwd, agentId: session.agent, command });
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
  return { directory: session.cwd, agentId: session.agent, command };
}
