import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { floodChunk } from "../../src/agents/demo-agent/commands/flood.js";
import { closeAllHosts, startHost, text } from "./host-harness.js";

afterEach(closeAllHosts);

/** The stored text of a session's update rows, read from the SQLite file by a connection of its own. */
function updateRows(dataDir: string, sessionId: string): Array<{ seq: number; payload: string }> {
  const db = new Database(join(dataDir, "berth.sqlite"), { readonly: true });
  try {
    return db
      .prepare<[string], { seq: number; payload: string }>("SELECT seq, payload FROM events WHERE session_id = ? AND kind = 'update' ORDER BY seq")
      .all(sessionId);
  } finally {
    db.close();
  }
}

describe("a journal row of an agent's update", () => {
  it("is the update's own text, without the agent's JSON-RPC envelope", async () => {
    const { host, workDir, dataDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    await host.prompt(session.id, text("/flood 3 32"));
    const chunks = updateRows(dataDir, session.id).filter((row) => row.payload.includes('"agent_message_chunk"'));
    const messageId = (JSON.parse(chunks[0]!.payload) as { update: { messageId: string } }).update.messageId;
    expect(chunks.map((row) => row.payload)).toEqual(
      [0, 1, 2].map(
        (i) =>
          `{"update":{"sessionUpdate":"agent_message_chunk","messageId":"${messageId}","content":{"type":"text","text":"${floodChunk(i, 32)}"}}}`,
      ),
    );
  });

  it("written before as the agent's whole line, is read, replayed, previewed and forked as it was", async () => {
    const fixture = await startHost();
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    await fixture.host.prompt(session.id, text("/flood 3 32"));
    await fixture.host.prompt(session.id, text("hello"));
    const events = fixture.host.events(session.id);
    const preview = fixture.host.getSession(session.id)!.preview;
    expect(preview?.role).toBe("agent");

    // Each update row as an earlier Berth stored it: the agent's line as it came (its own session id), in the SDK's key order.
    const agentSessionId = "the-agent's-own-id";
    const db = new Database(join(fixture.dataDir, "berth.sqlite"));
    const rewrite = db.prepare<[string, string, number]>("UPDATE events SET payload = ? WHERE session_id = ? AND seq = ?");
    for (const row of updateRows(fixture.dataDir, session.id)) {
      const { update, _meta } = JSON.parse(row.payload) as { update: unknown; _meta?: unknown };
      const params = _meta ? { sessionId: agentSessionId, update, _meta } : { sessionId: agentSessionId, update };
      rewrite.run(JSON.stringify({ jsonrpc: "2.0", method: "session/update", params }), session.id, row.seq);
    }
    db.close();
    expect(updateRows(fixture.dataDir, session.id).every((row) => row.payload.startsWith('{"jsonrpc":"2.0"'))).toBe(true);

    const host = await fixture.restart();
    expect(host.events(session.id)).toEqual(events);
    expect([...host.replay(session.id)]).toEqual(events);
    expect(host.getSession(session.id)!.preview).toEqual(preview);
    const fork = await host.forkSession(session.id, { cwd: fixture.workDir });
    const copied = host.events(fork.id).filter((event) => event.kind === "update");
    expect(copied.map((event) => event.payload)).toEqual(events.filter((event) => event.kind === "update").map((event) => event.payload));
    // The fork's copy is written anew: in the row's form.
    expect(updateRows(fixture.dataDir, fork.id).every((row) => row.payload.startsWith('{"update":'))).toBe(true);
  });
});
