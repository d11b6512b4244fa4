import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { AgentChild } from "../../src/agents/agent-child.js";
import type { AgentClientHandlers } from "../../src/agents/agent-client-handlers.js";
import { divertSessionUpdates } from "../../src/agents/session-update-fast-path.js";
import { TurnBudget } from "../../src/agents/turn-budget.js";
import { processIsRunning } from "../support/process-table.js";

const burstAgent = fileURLToPath(new URL("./fixtures/burst-then-exit-agent.mjs", import.meta.url));
const BURST = 1_300;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Twenty other outputs streaming on `budget` as fast as they are read, as other sessions' agents do. */
function otherOutputs(budget: TurnBudget): void {
  const line = `${JSON.stringify({ method: "session/update", params: { sessionId: "o", update: { sessionUpdate: "agent_message_chunk" } } })}\n`;
  const chunk = line.repeat(Math.floor(65_536 / line.length));
  const outputs = Array.from({ length: 20 }, () => {
    const output = new PassThrough();
    const rest = divertSessionUpdates(
      output,
      {
        onUpdate: () => undefined,
        onResponse: () => undefined,
        onRequest: () => undefined,
        onRefused: () => undefined,
        answerAgent: () => undefined,
      },
      undefined,
      { take: () => budget.take(), next: (handle) => budget.next(handle), pause: () => output.pause(), resume: () => output.resume() },
    );
    void rest.getReader().read();
    return output;
  });
  const timer = setInterval(() => {
    for (const output of outputs) if (output.readableLength + output.writableLength < 65_536) output.write(chunk);
  }, 0);
  cleanups.push(() => {
    clearInterval(timer);
    for (const output of outputs) output.destroy();
  });
}

describe("an agent child's output, paced by the turn budget", () => {
  it("held by the host's backlog when the agent exits: every line it wrote is handled by the time `ended` settles, behind other outputs", async () => {
    const budget = new TurnBudget(512);
    let handled = 0;
    const child = await AgentChild.start({
      agentId: "burst",
      sessionId: "s",
      cwd: process.cwd(),
      command: { command: process.execPath, args: [burstAgent], env: { BURST_LINES: String(BURST) } },
      // Only updates reach this agent's handlers: it asks nothing.
      handlers: { sessionUpdate: () => void handled++ } as unknown as AgentClientHandlers,
      initializeTimeoutMs: 10_000,
      stopTimeoutMs: 2_000,
      turnBudget: budget,
    });
    otherOutputs(budget);
    child.readOutput("held");
    await child.notify("_burst", {});
    await child.ended;
    expect(handled).toBe(BURST);
    expect(processIsRunning(child.pid)).toBe(false);
  });
});
