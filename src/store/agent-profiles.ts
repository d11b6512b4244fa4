import type { SqliteDatabase } from "./database.js";
import { requireText, requireTimestamp, type Json } from "./input.js";
import { guardWrite } from "./write-guard.js";

/** An agent's last `initialize` answer, for the command line that gave it. */
export interface AgentProfile {
  agent: string;
  /** The command line (command, args, env names) it was taken from: another command line is another agent. */
  command: string;
  initialize: Json;
  at: number;
}

/** Agents' `initialize` answers, so a client's `initialize` never has to start an agent twice. */
export class AgentProfileStore {
  readonly #put;
  readonly #get;

  constructor(db: SqliteDatabase) {
    this.#put = db.prepare<[string, string, string, number]>(
      `INSERT INTO agent_profiles (agent, command, initialize, at) VALUES (?, ?, ?, ?)
       ON CONFLICT (agent) DO UPDATE SET command = excluded.command, initialize = excluded.initialize, at = excluded.at`,
    );
    this.#get = db.prepare<[string], { agent: string; command: string; initialize: string; at: number }>(
      "SELECT agent, command, initialize, at FROM agent_profiles WHERE agent = ?",
    );
  }

  put(profile: AgentProfile): void {
    const op = "agentProfiles.put";
    const agent = requireText(op, "agent", profile.agent);
    const command = requireText(op, "command", profile.command);
    const at = requireTimestamp(op, "at", profile.at);
    guardWrite(op, () => this.#put.run(agent, command, JSON.stringify(profile.initialize), at));
  }

  get(agent: string): AgentProfile | undefined {
    const row = this.#get.get(agent);
    return row && { ...row, initialize: JSON.parse(row.initialize) as Json };
  }
}
