import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentUnderTest } from "./agent-under-test.js";

const stdinTap = fileURLToPath(new URL("../fixtures/stdin-tap.mjs", import.meta.url));

/**
 * The agent run through a tap (fixtures/stdin-tap.mjs) that records what Berth sends it, in its home (removed with
 * the world): a test learns when a message reached the real agent, which has no record of its own.
 */
export function tapped(agent: AgentUnderTest): { agent: AgentUnderTest; received: (method: string) => number } {
  let record = "";
  const prepare: AgentUnderTest["prepare"] = async (options) => {
    const entry = await agent.prepare(options);
    record = join(options.home, "berth-to-agent.ndjson");
    return { ...entry, command: process.execPath, args: [stdinTap, record, entry.command, ...entry.args] };
  };
  /** How many messages of `method` the agent's processes received. */
  const received = (method: string) =>
    existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .filter((line) => line.includes(`"method":"${method}"`)).length
      : 0;
  return { agent: { ...agent, prepare }, received };
}
