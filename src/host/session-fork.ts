import { randomUUID } from "node:crypto";
import type { McpServer } from "@agentclientprotocol/sdk";
import { methods } from "@agentclientprotocol/sdk/unstable";
import { InvalidLocationError, locationKey } from "../lifecycle/location-key.js";
import { TurnAlreadyRunningError } from "../lifecycle/executions.js";
import { agentRequestOf } from "./agent-request.js";
import type { HostParts } from "./host-composition.js";
import type { JournalKind } from "./journal.js";
import { locationOf } from "./session-location.js";

type ForkParts = Pick<HostParts, "catalog" | "holds" | "executions" | "journal" | "store" | "clock">;

/** What a client's `session/fork` asks besides the session: passed on to the agent's own fork. */
export interface ForkRequest {
  readonly cwd: string;
  readonly mcpServers?: McpServer[];
  readonly additionalDirectories?: string[];
  readonly _meta?: Record<string, unknown>;
}

/** The session's agent does not advertise `sessionCapabilities.fork`: its conversation cannot be copied. */
export class ForkUnsupportedError extends Error {
  override readonly name = "ForkUnsupportedError";
  constructor(readonly agent: string) {
    super(`agent "${agent}" cannot fork sessions`);
  }
}

/** Journal kinds copied into a fork: a question belongs to the session that asked it, and stays there. */
const COPIED_KINDS: ReadonlySet<string> = new Set<JournalKind>(["turn_started", "update", "turn_ended", "interrupted", "agent_exited"]);

/**
 * A new session whose agent conversation is the agent's fork of `sessionId`'s (asked of that session's child, started
 * if stopped) and whose journal is a copy of the original's; settles with its id once both are stored. The fork works
 * where the original does, with the same agent, request and sandbox, and owns no worktree.
 */
export async function forkSession(parts: ForkParts, sessionId: string, request: ForkRequest, signal?: AbortSignal): Promise<string> {
  const original = parts.catalog.require(sessionId);
  const key = locationOf(original);
  const asked = locationKey(request.cwd, original.workspace);
  if (asked.directory !== original.cwd)
    throw new InvalidLocationError(`session "${sessionId}" works in ${original.cwd}, not ${asked.directory}: fork it there`);
  // A copy taken mid-turn would hold a turn that never ends.
  if (parts.executions.isActive(sessionId)) throw new TurnAlreadyRunningError(sessionId, "has a turn in flight: fork it once the turn ended");
  const agentSessionId = await agentFork(parts, sessionId, original.agent, request, signal);
  const id = randomUUID();
  const { reopen: _reopen, ...agentRequest } = agentRequestOf(original.agentRequest);
  const row = {
    id,
    agent: original.agent,
    cwd: original.cwd,
    workspace: original.workspace,
    agentSessionId,
    // Its history is the original's so far, so is its title: its next prompt is not its first.
    title: original.title,
    // The fork's own child loads the agent's fork with the MCP servers the forking client gave.
    agentRequest: { ...agentRequest, reopen: { mcpServers: request.mcpServers ?? [] } },
    worktree: null,
    createdAt: parts.clock.now(),
  };
  const { journal } = parts;
  await journal.within(journal.call("sessions.create", [row], id), "the forked session", "it was not created");
  for (const event of parts.store.events.replay(sessionId))
    if (COPIED_KINDS.has(event.kind)) journal.append(id, key, event.kind as JournalKind, event.payload);
  await journal.within(journal.committed(), "the forked session's history", "its history was not copied");
  return id;
}

/** The agent's fork of the session's conversation, made by the session's child; the child then lets go of it. */
async function agentFork(parts: ForkParts, sessionId: string, agent: string, request: ForkRequest, signal?: AbortSignal): Promise<string> {
  const ticket = parts.holds.hold(sessionId, `fork:${randomUUID()}`);
  try {
    const child = await ticket.child;
    if (!child.canFork) throw new ForkUnsupportedError(agent);
    const answer = await child.forkSession({ ...request, sessionId }, signal);
    // One conversation per process: the fork's own child loads it.
    if (child.canClose) await child.request(methods.agent.session.close, { sessionId: answer.sessionId }).catch(() => undefined);
    return answer.sessionId;
  } finally {
    ticket.release();
  }
}
