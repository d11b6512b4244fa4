import { basename, join } from "node:path";

/** Where an agent keeps its own state, given the user's home and Berth's directory for agents' state. */
interface StatePlaces {
  readonly home: string;
  /** `<dataDir>/agent-state`: Berth's own agents (the demo) keep theirs there. */
  readonly agentStateDir: string;
}

type StateDirs = (places: StatePlaces) => string[];

/** What every agent may write besides its own: package managers' caches, which `npx`- and `uvx`-run agents fill. */
const COMMON: StateDirs = ({ home }) => [join(home, ".cache"), join(home, ".npm")];

/**
 * Each known agent's own state (logins, settings, history), by agent id or by its command's name. An agent this
 * table does not know gets the common ones alone; `agents.<id>.sandbox.binds` adds more.
 */
const AGENT_STATE: Readonly<Record<string, StateDirs>> = {
  demo: ({ agentStateDir }) => [join(agentStateDir, "demo")],
  claude: ({ home }) => [join(home, ".claude"), join(home, ".claude.json"), join(home, ".config", "claude")],
  codex: ({ home }) => [join(home, ".codex")],
  gemini: ({ home }) => [join(home, ".gemini")],
  opencode: ({ home }) => [join(home, ".local", "share", "opencode"), join(home, ".config", "opencode"), join(home, ".local", "state", "opencode")],
};

/** The table's key for an agent: its id when listed, else its command's name, with `-acp` and such suffixes cut. */
function tableKey(agentId: string, command: string): string | undefined {
  for (const name of [agentId, basename(command)]) {
    const key = Object.keys(AGENT_STATE).find((known) => name === known || name.startsWith(`${known}-`));
    if (key) return key;
  }
  return undefined;
}

/** The directories (and `.json` files) the agent writes its own state to, which a sandbox leaves writable. */
export function agentStateDirs(agentId: string, command: string, places: StatePlaces): string[] {
  const key = tableKey(agentId, command);
  return [...(key ? AGENT_STATE[key]!(places) : []), ...COMMON(places)];
}
