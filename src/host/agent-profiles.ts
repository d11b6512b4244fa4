import type { InitializeResponse } from "@agentclientprotocol/sdk";
import { berthClientCapabilities, type AgentCommand } from "../agents/agent-child.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import type { Clock } from "../lifecycle/clock.js";
import type { Json } from "../store/index.js";
import type { AgentProfile } from "../store/agent-profiles.js";
import type { Store } from "../store/store.js";

/**
 * Each agent's own `initialize` answer (capabilities, auth methods, `_meta`), which Berth gives
 * its clients as theirs. Taken from every child that starts; when none has yet, one probe child
 * is started for it. Stored per command line, so reading a filled cache never starts a process.
 */
export class AgentProfiles {
  private readonly probing = new Map<string, Promise<InitializeResponse>>();
  /** Answers remembered by this host, which reads may not show yet: their writes are queued. */
  private readonly remembered = new Map<string, AgentProfile>();

  constructor(
    private readonly store: Store,
    private readonly registry: AgentRegistry,
    private readonly clock: Clock,
    private readonly probe: (agentId: string) => Promise<InitializeResponse>,
    /** Stores a profile through the host's one writer. */
    private readonly save: (profile: AgentProfile) => void,
  ) {}

  /** The agent's answer: stored, or from a probe (one at a time per agent). */
  async get(agentId: string): Promise<InitializeResponse> {
    const command = commandKey(this.registry.resolve(agentId));
    const stored = this.remembered.get(agentId) ?? this.store.agentProfiles.get(agentId);
    if (stored?.command === command) return stored.initialize as unknown as InitializeResponse;
    let probing = this.probing.get(agentId);
    if (!probing) {
      probing = this.probe(agentId).finally(() => this.probing.delete(agentId));
      this.probing.set(agentId, probing);
    }
    return probing;
  }

  /** A child of `agentId` answered `initialize`: its answer is the agent's from now on. */
  remember(agentId: string, response: InitializeResponse): void {
    const command = commandKey(this.registry.resolve(agentId));
    const profile = { agent: agentId, command, initialize: response as unknown as Json, at: this.clock.now() };
    this.remembered.set(agentId, profile);
    this.save(profile);
  }
}

/**
 * Another command, other arguments or other environment names make another agent; values are not stored. An answer to
 * other capabilities than Berth declares now (an older Berth's) is asked again: an agent's offer depends on them.
 */
function commandKey(command: AgentCommand): string {
  return JSON.stringify({ command: command.command, args: command.args, env: Object.keys(command.env).sort(), client: berthClientCapabilities });
}
