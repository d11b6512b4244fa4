import { randomUUID } from "node:crypto";
import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/**
 * `/run <cmd>`: runs `/bin/sh -c <cmd>` in a client terminal at the session's cwd,
 * shows the terminal in a tool call, then reports the output and exit status. `keepTerminal`: as
 * agents that leave the terminal in the tool call, the final update keeps the terminal content and
 * the terminal is not released (Berth releases it with the session's agent).
 */
export async function runShell(turn: Turn, shellCommand: string, keepTerminal = false): Promise<StopReason> {
  if (!turn.peer.capabilities.terminal) {
    await turn.say("Cannot /run: the client did not advertise terminal support (clientCapabilities.terminal).");
    return "end_turn";
  }
  const toolCallId = `run-${randomUUID()}`;
  const title = shellCommand;
  const terminal = await turn.client.createTerminal({
    sessionId: turn.sessionId,
    command: "/bin/sh",
    args: ["-c", shellCommand],
    cwd: turn.cwd,
  });
  try {
    await turn.send({
      sessionUpdate: "tool_call",
      toolCallId,
      title,
      kind: "execute",
      status: "in_progress",
      content: [{ type: "terminal", terminalId: terminal.id }],
      rawInput: { command: shellCommand },
    });
    // A cancelled turn stops its command; the exit then ends the wait below.
    const kill = (): void => void terminal.kill().catch(() => undefined);
    turn.cancelled.addEventListener("abort", kill, { once: true });
    if (turn.cancelled.aborted) kill();
    const exit = await terminal.waitForExit().finally(() => turn.cancelled.removeEventListener("abort", kill));
    const { output } = await terminal.currentOutput();
    const status = exit.exitCode === 0 ? "completed" : "failed";
    await turn.send({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status,
      ...(keepTerminal ? {} : { content: [{ type: "content", content: { type: "text", text: output } }] }),
      rawOutput: { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null },
    });
    turn.append({ kind: "tool_call", toolCallId, title, status, output });
  } finally {
    if (!keepTerminal) await terminal.release();
  }
  return "end_turn";
}
