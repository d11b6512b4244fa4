import { describe, expect, it } from "vitest";
import type { AgentUnderTest } from "./agent-under-test.js";
import { claude } from "./agents/claude.js";
import { codex } from "./agents/codex.js";
import { toolCalls, useDataDir, useWorld } from "./scenarios.js";

/**
 * Issue 25, item 2 with real agents: claude-agent-acp and codex-acp embed the terminals of the commands they run
 * themselves (`_meta.terminal_info/terminal_output/terminal_exit`) for a client that declared
 * `_meta.terminal_output`, which Berth declares to every agent. Through Berth, such a client must get them as sent.
 * (Item 1 with real agents: busy-prompts.test.ts.)
 */
for (const agent of [claude, codex] satisfies AgentUnderTest[]) {
  describe.skipIf(!agent.available())(
    `${agent.id}: a terminal it embeds reaches a client that declared _meta.terminal_output`,
    { timeout: 240_000 },
    () => {
      const world = useWorld(agent, useDataDir(agent));

      it("the command's terminal comes in the updates' _meta, as the agent sent it", async () => {
        const w = world();
        const tag = w.play([{ text: "Running.", toolCalls: [agent.shellTool("echo embedded-output-91")] }, { text: "Done." }]);
        const client = await w.connect({ capabilities: { _meta: { terminal_output: true } } });
        const sessionId = await client.newSession(w.cwd);

        expect((await client.prompt(sessionId, `${tag} run it`)).stopReason).toBe("end_turn");

        const metas = client.notifications.filter((n) => n.sessionId === sessionId).map((n) => n.update._meta ?? {});
        const info = metas.find((meta) => "terminal_info" in meta)?.terminal_info as { terminal_id: string } | undefined;
        expect(info?.terminal_id).toEqual(expect.any(String));
        if (agent.id === "claude") {
          const output = metas.flatMap((meta) => {
            const chunk = meta.terminal_output as { terminal_id: string; data: string } | undefined;
            return chunk?.terminal_id === info?.terminal_id ? [chunk!.data] : [];
          });
          expect(output.join("")).toContain("embedded-output-91");
        } else {
          // codex-acp sends `terminal_output` only for output its command streams while it runs (as observed: none for an
          // `echo` that ended at once); the output comes in the last update's rawOutput.
          expect(toolCalls(client, sessionId).at(-1)?.output).toContain("embedded-output-91");
        }
        expect(metas.find((meta) => "terminal_exit" in meta)?.terminal_exit).toMatchObject({ terminal_id: info?.terminal_id, exit_code: 0 });
      });
    },
  );
}
