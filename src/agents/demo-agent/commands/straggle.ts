import { spawn } from "node:child_process";
import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** The helper: ignores SIGTERM, and `delay` ms after the first one writes its line on the stdout it shares with the agent, then exits. */
const HELPER = `
let told = false;
process.on("SIGTERM", () => {
  if (told) return;
  told = true;
  setTimeout(() => process.stdout.write(process.env.BERTH_DEMO_STRAGGLER_LINE + "\\n", () => process.exit(0)), Number(process.env.BERTH_DEMO_STRAGGLER_DELAY_MS));
});
setInterval(() => undefined, 3_600_000);
process.send("ready", () => process.disconnect());
`;

/**
 * `/straggle <duration> <text>`: starts a helper in the agent's process group that shares the agent's stdout, as a
 * native binary behind an npm wrapper does. It ignores SIGTERM and, `<duration>` after it was sent one, writes `<text>`
 * as an agent message of this session on that stdout, then exits: an agent that says its last words after it was told to stop.
 */
export async function straggle(turn: Turn, delayMs: number, text: string): Promise<StopReason> {
  const line = JSON.stringify({
    jsonrpc: "2.0",
    method: "session/update",
    params: { sessionId: turn.sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
  });
  const helper = spawn(process.execPath, ["-e", HELPER], {
    detached: false,
    // The IPC channel only says the helper listens for SIGTERM: a signal before that would end it at once.
    stdio: ["ignore", "inherit", "ignore", "ipc"],
    env: { ...process.env, BERTH_DEMO_STRAGGLER_LINE: line, BERTH_DEMO_STRAGGLER_DELAY_MS: String(delayMs) },
  });
  const ready = await new Promise<boolean>((resolve) => {
    helper.once("message", () => resolve(true));
    helper.once("error", () => resolve(false));
    helper.once("exit", () => resolve(false));
  });
  helper.unref();
  if (!ready || helper.pid === undefined) {
    await turn.say("Could not start the straggler: spawning node failed.");
    return "end_turn";
  }
  await turn.say(`straggler pid: ${helper.pid}`);
  return "end_turn";
}
