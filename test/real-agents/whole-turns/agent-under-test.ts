import type { ToolCallStep } from "../../support/model-endpoint/script.js";
import type { AgentEntry } from "../../support/real-agents.js";

/**
 * A real agent as the whole-turn scenarios (scenarios.ts) drive it: how to point it at the scripted
 * model endpoint in a fresh home, and how its model names the tools the scripts call. One
 * descriptor per agent in agents/; one test file per agent runs the scenarios with it.
 */

/** A Berth agent config entry (`agents.<id>` in berth.json). */
type AgentCommand = AgentEntry;

/** The whole-turn scenarios of scenarios.ts, by name. */
export type ScenarioName = "write-and-run" | "reconnect" | "restart" | "permission" | "long-call" | "cap";

export interface AgentUnderTest {
  /** The agent id in the Berth config. */
  id: string;
  /** Installed? When not, `unavailableReason` says why and the scenarios are skipped with it. */
  available(): boolean;
  unavailableReason: string;
  /**
   * Writes the agent's fresh HOME/XDG/config for an endpoint URL (`http://127.0.0.1:PORT`, no `/v1`)
   * and a cwd; returns the Berth agent config. `askPermission`: the agent asks over ACP before it
   * runs a shell command.
   */
  prepare(opts: { home: string; cwd: string; endpointUrl: string; askPermission: boolean }): Promise<AgentCommand>;
  /** The tool call that makes this agent run a shell command. */
  shellTool(command: string): ToolCallStep;
  /** The tool call that makes this agent write a file (absolute path). */
  writeTool(path: string, content: string): ToolCallStep;
  /** The option kind that answers its permission prompt once. */
  allowOnceOptionKind: "allow_once";
  /** The `authenticate` method a client calls before session/new, if the agent needs one (codex). */
  authMethodId?: string;
  /**
   * Scenarios the agent itself cannot do, each with the reason seen (docs/host.md says the same):
   * they are listed as skipped with the reason, never run as if they passed.
   */
  cannot?: Partial<Record<ScenarioName, string>>;
}
