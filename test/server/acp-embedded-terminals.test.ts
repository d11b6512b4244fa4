import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, startFixture, type ToolUpdate, toolUpdates, waitUntil } from "./server-harness.js";

afterEach(cleanUp);

/** The text of each update's content, as a client that shows text sees it ("" for an update without content). */
function shownTexts(updates: ToolUpdate[]): string[] {
  return updates.map((u) =>
    (u.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : `[${c.type}]`)).join(""),
  );
}

const embeddingClient = { _meta: { terminal_output: true } };

describe("a terminal the agent embeds in its tool call (claude-agent-acp's and codex-acp's `_meta.terminal_output`)", () => {
  it("reaches a client that declared terminal_output as the agent sent it, any other as its output in text, live and replayed", async () => {
    const fixture = await startFixture();
    const embedding = await fixture.connect({ capabilities: embeddingClient });
    const sessionId = await embedding.newSession(fixture.workDir);
    const texts = await fixture.connect({ capabilities: {} });
    await texts.load(sessionId, fixture.workDir);

    // The agent embeds only for a client that declared it: Berth did, for every client.
    await embedding.prompt(sessionId, "/embed hello from the agent's own terminal");
    const sent = toolUpdates(embedding, sessionId);
    const terminalId = sent[0]!.toolCallId;
    expect(sent).toEqual([
      expect.objectContaining({
        sessionUpdate: "tool_call",
        content: [{ type: "terminal", terminalId }],
        _meta: { terminal_info: { terminal_id: terminalId } },
      }),
      {
        sessionUpdate: "tool_call_update",
        toolCallId: terminalId,
        _meta: { terminal_output: { terminal_id: terminalId, data: "hello from the agent's own terminal" } },
      },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: terminalId,
        status: "completed",
        content: [{ type: "terminal", terminalId }],
        _meta: { terminal_exit: { terminal_id: terminalId, exit_code: 0, signal: null } },
      },
    ]);

    const output = "```\nhello from the agent's own terminal\n```";
    /** The terminal as text: empty at first, its output as it exits; a chunk between brings no content of its own (the output follows at most every 500 ms). */
    const expectShownAsText = (updates: ToolUpdate[]) => {
      const shown = shownTexts(updates);
      expect(shown[0]).toBe("```\n\n```");
      expect(shown.at(-1)).toBe(`${output}\n(exit code 0)`);
      for (const between of shown.slice(1, -1)) expect(["", output]).toContain(between);
    };
    await waitUntil(() => toolUpdates(texts, sessionId).some((u) => u.status === "completed"), "the text client's completed tool call");
    expectShownAsText(toolUpdates(texts, sessionId));
    // The terminal each text stands for is named, as for Berth's own terminals.
    expect(toolUpdates(texts, sessionId).at(-1)!.content).toEqual([
      { type: "content", content: { type: "text", text: `${output}\n(exit code 0)` }, _meta: { "berth/rawTerminals": { terminalId } } },
    ]);

    // A later reader gets the same from the journal: the output is kept with the updates.
    const later = await fixture.connect({ capabilities: {} });
    await later.load(sessionId, fixture.workDir);
    expectShownAsText(toolUpdates(later, sessionId));
    const laterEmbedding = await fixture.connect({ capabilities: embeddingClient });
    await laterEmbedding.load(sessionId, fixture.workDir);
    expect(toolUpdates(laterEmbedding, sessionId)).toEqual(sent);
  });
});
