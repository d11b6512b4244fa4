import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { floodChunk } from "../../src/agents/demo-agent/commands/flood.js";
import type { ReadEvent } from "../../src/host/views.js";
import { cleanUp, startFixture, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

type Update = { sessionUpdate: string; content?: { text?: string } };
const CHUNKS = 30_000;
const BYTES = 16;

/** Pages the journal over REST as the dashboard does (`merge=chunks`, the largest page) from `after` to the end. */
async function readAll(fixture: BerthFixture, sessionId: string, after: number): Promise<{ events: ReadEvent[]; requests: number }> {
  const events: ReadEvent[] = [];
  let from = after;
  for (let requests = 1; ; requests++) {
    const response = await fixture.api(`/api/sessions/${sessionId}/events?after=${from}&limit=10000&merge=chunks`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { events: ReadEvent[]; more: boolean };
    events.push(...page.events);
    if (!page.more) return { events, requests };
    from = page.events.at(-1)!.seq;
  }
}

const agentText = (events: readonly ReadEvent[]): string =>
  events
    .map((event) => (event.payload as { update?: Update }).update)
    .filter((update) => update?.sessionUpdate === "agent_message_chunk")
    .map((update) => update!.content!.text)
    .join("");

describe("GET /api/sessions/:id/events?merge=chunks: a flooded session read again", () => {
  it("gives the whole reply in few events, from the start or from any seq, after a restart, without starting the agent", async () => {
    const first = await startFixture();
    const sessionId = (await first.berth.host.createSession({ cwd: first.workDir })).id;
    expect((await first.berth.host.prompt(sessionId, [{ type: "text", text: `/flood ${CHUNKS} ${BYTES}` }])).stopReason).toBe("end_turn");
    await first.stop();

    // Reopened: a new Berth on the same data directory, nothing holding the session.
    const fixture = await startFixture({ dataDir: first.dataDir, workDir: first.workDir });
    const expected = Array.from({ length: CHUNKS }, (_, i) => floodChunk(i, BYTES)).join("");
    const raw = fixture.berth.host.events(sessionId, { after: 0, limit: 100_000 });
    expect(raw.length).toBeGreaterThan(CHUNKS);

    const whole = await readAll(fixture, sessionId, 0);
    expect(agentText(whole.events)).toBe(expected);
    // 65,536 code units of text per merged chunk at most: 480 kB come in a handful of events, in 4 requests of 10,000 journal events.
    expect(whole.events.length).toBeLessThan(20);
    expect(whole.requests).toBe(Math.ceil(raw.length / 10_000));
    // (The agent's command announcement as the session opened may come before the turn.)
    expect(whole.events.filter((event) => event.kind === "turn_started")).toHaveLength(1);
    expect(whole.events.at(-1)).toMatchObject({ kind: "turn_ended", seq: raw.at(-1)!.seq });

    // A reader that stopped anywhere in the reply (a page, a live chunk) reads on from there: nothing lost, nothing twice.
    const replyStart = raw.findIndex((event) => (event.payload as { update?: Update }).update?.sessionUpdate === "agent_message_chunk");
    for (const chunksRead of [1, 777, 10_000, 12_345, CHUNKS - 1]) {
      const after = raw[replyStart + chunksRead - 1]!.seq;
      const rest = await readAll(fixture, sessionId, after);
      expect(agentText(rest.events), `after ${chunksRead} chunks`).toBe(expected.slice(chunksRead * BYTES));
      expect(rest.events.every((event) => (event.seqFrom ?? event.seq) > after)).toBe(true);
    }

    // Unmerged pages are the journal as it is; both say whether more follows.
    const plain = (await (await fixture.api(`/api/sessions/${sessionId}/events?after=0&limit=10000`)).json()) as {
      events: ReadEvent[];
      more: boolean;
    };
    expect(plain).toEqual({ events: raw.slice(0, 10_000), more: true });
    const last = (await (await fixture.api(`/api/sessions/${sessionId}/events?after=${raw.at(-2)!.seq}&limit=1`)).json()) as { more: boolean };
    expect(last.more).toBe(false);
    const refused = await fixture.api(`/api/sessions/${sessionId}/events?merge=yes`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: "invalid_query", message: 'merge must be "chunks", got "yes"' });

    // Reading started nothing (L9).
    expect(fixture.berth.host.getSession(sessionId)).toMatchObject({ state: "childless", holders: 0 });
  });
});

describe("GET /api/sessions/:id/events?merge=chunks: a malformed chunk from the agent", () => {
  it("is served as it is and the read still answers with everything", async () => {
    const fixture = await startFixture();
    const sessionId = (await fixture.berth.host.createSession({ cwd: fixture.workDir })).id;
    const say = async (text: string) => expect((await fixture.berth.host.prompt(sessionId, [{ type: "text", text }])).stopReason).toBe("end_turn");
    await say("before");
    // The agent's own notification, passed through the host's fast path as the agent wrote it.
    const malformed = [
      { sessionUpdate: "agent_message_chunk", content: null },
      { sessionUpdate: "agent_message_chunk", content: { type: "text" } },
    ];
    // Under the agent's own session id: updates of another conversation are not this session's.
    const db = new Database(join(fixture.dataDir, "berth.sqlite"), { readonly: true });
    const { agent_session_id: agentSessionId } = db.prepare("SELECT agent_session_id FROM sessions WHERE id = ?").get(sessionId) as {
      agent_session_id: string;
    };
    db.close();
    for (const update of malformed) await say(`/extnotify session/update ${JSON.stringify({ sessionId: agentSessionId, update })}`);
    await say("after");

    const raw = fixture.berth.host.events(sessionId, { after: 0, limit: 1000 });
    const stored = raw.filter((event) =>
      malformed.some((update) => JSON.stringify((event.payload as { update?: unknown }).update) === JSON.stringify(update)),
    );
    expect(stored).toHaveLength(2);
    const { events } = await readAll(fixture, sessionId, 0);
    for (const event of stored) expect(events).toContainEqual(event);
    expect(agentText(events.filter((event) => !stored.some((s) => s.seq === event.seq)))).toMatch(/before.*after/s);
    const covered = events.flatMap((event) => raw.filter((e) => e.seq >= (event.seqFrom ?? event.seq) && e.seq <= event.seq).map((e) => e.seq));
    expect(covered).toEqual(raw.map((event) => event.seq));
  });
});
