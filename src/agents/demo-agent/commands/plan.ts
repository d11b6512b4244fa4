import type { PlanEntry, StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/plan <step>; <step>; ...`: shows a plan and works through it, each step in progress then done. */
export async function plan(turn: Turn, steps: readonly string[]): Promise<StopReason> {
  const entries = (done: number, working: boolean): PlanEntry[] =>
    steps.map((content, i) => ({
      content,
      priority: "medium",
      status: i < done ? "completed" : i === done && working ? "in_progress" : "pending",
    }));
  for (let done = 0; done <= steps.length; done++) {
    if (turn.cancelled.aborted) return "cancelled";
    await turn.send({ sessionUpdate: "plan", entries: entries(done, done < steps.length) });
  }
  await turn.say(`Done: ${steps.length} ${steps.length === 1 ? "step" : "steps"}.`);
  return "end_turn";
}

/** `/think <text>`: streams `text` as the agent's thought, then answers in a message. */
export async function think(turn: Turn, text: string): Promise<StopReason> {
  await turn.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text } });
  await turn.say("Thought it through.");
  return "end_turn";
}
