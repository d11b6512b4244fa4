import { spawn } from "node:child_process";
import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/**
 * `/spawn-orphan`: starts `sleep 3600` in the agent's own process group, so it
 * outlives the agent unless the host stops the whole group.
 */
export async function spawnOrphan(turn: Turn): Promise<StopReason> {
  const orphan = spawn("sleep", ["3600"], { detached: false, stdio: "ignore" });
  orphan.unref();
  if (orphan.pid === undefined) {
    await turn.say("Could not start the orphan: spawning `sleep 3600` failed.");
    return "end_turn";
  }
  await turn.say(`orphan pid: ${orphan.pid}`);
  return "end_turn";
}
