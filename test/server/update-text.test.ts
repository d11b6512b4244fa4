import Database from "better-sqlite3";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { cleanUp, initializeParams, RawSocket, startFixture, tempDir, waitUntil, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

const respacedAgent = fileURLToPath(new URL("./fixtures/respaced-agent.mjs", import.meta.url));

/** The stored text of the session's chunk rows, in seq order, read by a connection of its own. */
function chunkRows(fixture: BerthFixture, sessionId: string): string[] {
  const db = new Database(join(fixture.dataDir, "berth.sqlite"), { readonly: true });
  try {
    return db
      .prepare<[string], { payload: string }>("SELECT payload FROM events WHERE session_id = ? AND kind = 'update' ORDER BY seq")
      .all(sessionId)
      .map((row) => row.payload)
      .filter((payload) => payload.includes('"agent_message_chunk"'));
  } finally {
    db.close();
  }
}

/** A raw client on the session: `resume` (live from now on) or `load` (its history replayed first). */
async function attached(fixture: BerthFixture, sessionId: string, how: "resume" | "load", seqs = false): Promise<RawSocket> {
  const socket = await RawSocket.open(fixture.acpUrl, fixture.token);
  const clientCapabilities = seqs ? { _meta: { "berth/journalSeq": true } } : {};
  socket.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { ...initializeParams, clientCapabilities } });
  await socket.response(1);
  socket.send({ jsonrpc: "2.0", id: 2, method: `session/${how}`, params: { sessionId, cwd: fixture.workDir, mcpServers: [] } });
  await socket.response(2);
  return socket;
}

const chunkFrames = (socket: RawSocket) => socket.frames.filter((frame) => frame.includes('"agent_message_chunk"'));

describe("an agent's update reaches clients as the text the agent wrote", () => {
  it("live, a plain client is sent the agent's own text of each update with Berth's session id; a client shown seqs, and a replay, the same values serialised", async () => {
    const stateDir = tempDir("berth-respaced-agent-");
    const fixture = await startFixture({
      config: { agents: { respaced: { command: process.execPath, args: [respacedAgent, demoAgentMain, "--state-dir", stateDir] } } },
    });
    const { host } = fixture.berth;
    const sessionId = (await host.createSession({ cwd: fixture.workDir, agent: "respaced" })).id;
    const plain = await attached(fixture, sessionId, "resume");
    const numbered = await attached(fixture, sessionId, "resume", true);
    expect((await host.prompt(sessionId, [{ type: "text", text: "/flood 3 16" }])).stopReason).toBe("end_turn");
    await host.committed();

    // Stored as the agent wrote it (its spacing), without the envelope.
    const rows = chunkRows(fixture, sessionId);
    expect(rows).toHaveLength(3);
    for (const row of rows)
      expect(row).toMatch(/^\{"update":\{ "sessionUpdate": "agent_message_chunk", .*\},"_meta":\{ "respaced\/by": "fixture" \}\}$/);
    const asSent = rows.map(
      (row) => `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sessionId)},${row.slice(1)}}`,
    );

    await waitUntil(() => chunkFrames(plain).length === 3, "three chunks to the plain client");
    expect(chunkFrames(plain)).toEqual(asSent);

    // Shown with the journal's seq in its _meta (and chunks merged): serialised for it, the same text in the end.
    const textOf = (frame: string) => (JSON.parse(frame) as { params: { update: { content: { text: string } } } }).params.update.content.text;
    const text = asSent.map(textOf).join("");
    await waitUntil(() => chunkFrames(numbered).map(textOf).join("") === text, "the flood's text to the client reading seqs");
    for (const frame of chunkFrames(numbered))
      expect(frame).toMatch(
        /^\{"jsonrpc":"2\.0","method":"session\/update","params":\{"sessionId":"[^"]+","update":\{"sessionUpdate":"agent_message_chunk",/,
      );

    // Replayed from the journal by session/load: serialised again, the same values.
    const loader = await attached(fixture, sessionId, "load");
    expect(chunkFrames(loader).map((frame) => JSON.parse(frame))).toEqual(asSent.map((frame) => JSON.parse(frame)));
    await Promise.all([plain.close(), numbered.close(), loader.close()]);
  });
});
