import { describe, expect, it } from "vitest";
import { gate } from "../../support/model-endpoint/script.js";
import type { AgentUnderTest } from "./agent-under-test.js";
import { claude } from "./agents/claude.js";
import { codex } from "./agents/codex.js";
import { useDataDir, useWorld } from "./scenarios.js";
import { tapped } from "./stdin-tap.js";

/**
 * Issue 25, item 1 with real agents: a prompt sent during a running turn goes to the agent, which queues it
 * (claude-agent-acp advertises `_meta.claudeCode.promptQueueing`). Through a real `berth serve`, both prompts are
 * answered as the agent answers them, each is its own turn in Berth's journal in the order they were answered, and
 * nothing is refused with turn_in_flight.
 */

/**
 * codex-acp 0.16.0 queues the second prompt too and streams the model's answer to it, but never answers that
 * `session/prompt` (seen directly over its stdio as through Berth: no response until the connection closed), so the
 * scenario cannot end with it; docs/api.md says so.
 */
const cannot: Partial<Record<string, string>> = {
  codex: "codex-acp 0.16.0 streams the queued prompt's answer but never answers its session/prompt (directly as through Berth)",
};

for (const real of [claude, codex] satisfies AgentUnderTest[]) {
  describe.skipIf(!real.available())(`${real.id}: a prompt sent during a running turn, through Berth`, { timeout: 240_000 }, () => {
    const { agent, received } = tapped(real);
    const world = useWorld(agent, useDataDir(agent));
    const reason = cannot[real.id];
    const scenario = reason ? (what: string, body: () => Promise<void>) => it.skip(`${what} (${real.id} cannot: ${reason})`, body) : it;

    scenario("is queued by the agent: both are answered in order, each its own turn in the journal, none refused", async () => {
      const w = world();
      const held = gate();
      const tag = w.play([{ text: "First answer.", hold: held.opened }, { text: "Second answer." }]);
      const client = await w.connect();
      const sessionId = await client.newSession(w.cwd);
      const watcher = await w.connect();
      await watcher.load(sessionId, w.cwd);
      const firstPrompt = `${tag} first question`;
      const secondPrompt = `${tag} second question`;
      const order: string[] = [];
      const answered = (name: string, answer: Promise<{ stopReason: string }>) =>
        answer.then(({ stopReason }) => {
          order.push(name);
          return stopReason;
        });

      const first = answered("first", client.prompt(sessionId, firstPrompt));
      await w.waitForText(client, sessionId, "First answer.");
      // The model's first answer is still streaming: the agent is in its turn.
      const second = answered("second", client.prompt(sessionId, secondPrompt));
      await w.waitFor("the second prompt reached the agent", () => received("session/prompt") === 2);
      held.open();

      expect(await first).toBe("end_turn");
      expect(await second).toBe("end_turn");
      expect(order).toEqual(["first", "second"]);
      await w.waitFor("the turn settled after the last answer", async () => !(await w.session(sessionId)).turnActive);
      expect(await w.journaledTurns(sessionId)).toEqual([`started ${firstPrompt}`, "ended end_turn", `started ${secondPrompt}`, "ended end_turn"]);
      // The model was asked twice: the second time with the second prompt, after the first answer.
      const requests = w.requestsOf(tag);
      expect(requests).toHaveLength(2);
      expect(requests[1]!.lastUserText).toContain("second question");
      expect(JSON.stringify(requests[1]!.raw)).toContain("First answer.");
      expect(client.texts(sessionId)).toBe("First answer.Second answer.");
      // Another client sees each prompt as its own user message, each before the agent's words for it.
      await w.waitForText(watcher, sessionId, "Second answer.");
      expect(watcher.texts(sessionId, "user_message_chunk")).toBe(firstPrompt + secondPrompt);
      expect(watcher.texts(sessionId)).toBe("First answer.Second answer.");
    });
  });
}
