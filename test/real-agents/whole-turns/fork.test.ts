import { describe, expect, it } from "vitest";
import type { AgentUnderTest } from "./agent-under-test.js";
import { claude } from "./agents/claude.js";
import { opencode } from "./agents/opencode.js";
import { useDataDir, useWorld } from "./scenarios.js";
import { tapped } from "./stdin-tap.js";

/**
 * Issue 25, item 6 with real agents that offer `session/fork` (opencode, claude-agent-acp): through a real
 * `berth serve`, a fork is a new Berth session with the original's history, made by the agent's own fork of its
 * conversation (the model is sent the original's words when the fork is prompted, which Berth never sends it), and
 * the original is unchanged.
 */
/**
 * What Berth cannot do yet with claude-agent-acp 0.23.1, as seen: its fork lives only in the process that made it (no
 * transcript is written before the fork's first message), so the fork's own child cannot load it ("Resource not found")
 * and starts a fresh conversation (Berth's conversation_restarted notice): the fork keeps its history in the journal
 * only, not at the agent. docs/api.md says so.
 */
const cannot: Partial<Record<string, string>> = {
  claude: "its fork exists only in the forking process until its first message, so the fork's own child cannot load it",
};

for (const real of [opencode, claude] satisfies AgentUnderTest[]) {
  describe.skipIf(!real.available())(`${real.id}: session/fork through Berth`, { timeout: 240_000 }, () => {
    const { agent, received } = tapped(real);
    const world = useWorld(agent, useDataDir(agent));
    const reason = cannot[real.id];
    const scenario = reason ? (what: string, body: () => Promise<void>) => it.skip(`${what} (Berth cannot with ${real.id}: ${reason})`, body) : it;

    scenario("makes a new session with the history, natively; prompting the fork works and the original is unchanged", async () => {
      const w = world();
      const tag = w.play([{ text: "Noted the word." }, { text: "The fork answers." }, { text: "The original answers." }]);
      const client = await w.connect();
      expect(client.initialized.agentCapabilities?.sessionCapabilities).toMatchObject({ fork: {} });
      const original = await client.newSession(w.cwd);
      const firstPrompt = `${tag} remember the word lighthouse`;
      expect((await client.prompt(original, firstPrompt)).stopReason).toBe("end_turn");

      const events = async (sessionId: string) => (await w.api<{ events: unknown[] }>(`/api/sessions/${sessionId}/events?limit=10000`)).events;
      // The conversation as the journal tells it: its prompts and the agent's and user's message chunks.
      const messages = async (sessionId: string) =>
        (
          (await events(sessionId)) as { kind: string; payload: { prompt?: unknown; update?: { sessionUpdate: string; content?: unknown } } }[]
        ).flatMap(({ kind, payload }) => {
          if (kind === "turn_started") return [{ prompt: payload.prompt }];
          const update = payload.update;
          return update && /message_chunk$/.test(update.sessionUpdate) ? [{ [update.sessionUpdate]: update.content }] : [];
        });
      const originalBefore = await events(original);
      const { sessionId: forked } = (await client.agent.request("session/fork", { sessionId: original, cwd: w.cwd, mcpServers: [] })) as {
        sessionId: string;
      };
      expect(forked).not.toBe(original);
      // The agent's own fork: it got session/fork.
      expect(received("session/fork")).toBe(1);
      expect(await w.session(forked)).toMatchObject({ agent: agent.id, cwd: w.cwd });
      // The fork's journal is the original's copied, nothing more (the history an agent replays for its fork is not new).
      expect(await w.journaledTurns(forked)).toEqual([`started ${firstPrompt}`, "ended end_turn"]);
      expect(await events(original)).toEqual(originalBefore);
      expect(await messages(forked)).toEqual(await messages(original));

      expect((await client.prompt(forked, "which word, in the fork?")).stopReason).toBe("end_turn");
      await w.waitForText(client, forked, "The fork answers.");
      // The fork's agent conversation holds the original's words: the model was sent them.
      const [, forkRequest] = w.requestsOf(tag);
      expect(forkRequest!.lastUserText).toContain("which word, in the fork?");
      expect(JSON.stringify(forkRequest!.raw)).toContain("remember the word lighthouse");
      expect(JSON.stringify(forkRequest!.raw)).toContain("Noted the word.");

      // The original is unchanged: its journal, and its agent conversation (the model is not sent the fork's words).
      expect(await w.journaledTurns(original)).toEqual([`started ${firstPrompt}`, "ended end_turn"]);
      expect((await client.prompt(original, "which word, in the original?")).stopReason).toBe("end_turn");
      const originalRequest = w.requestsOf(tag)[2]!;
      expect(originalRequest.lastUserText).toContain("which word, in the original?");
      expect(JSON.stringify(originalRequest.raw)).toContain("remember the word lighthouse");
      expect(JSON.stringify(originalRequest.raw)).not.toContain("in the fork");
      expect(await w.journaledTurns(forked)).toEqual([
        `started ${firstPrompt}`,
        "ended end_turn",
        "started which word, in the fork?",
        "ended end_turn",
      ]);

      // A new connection loading the fork is shown its whole history from the journal.
      const later = await w.connect();
      await later.load(forked, w.cwd);
      expect(later.texts(forked, "user_message_chunk")).toBe(`${firstPrompt}which word, in the fork?`);
      expect(later.texts(forked)).toBe("Noted the word.The fork answers.");
    });
  });
}
