import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/host/session-bus.js";
import { closeAllHosts, startHost, text, waitUntil } from "./host-harness.js";

afterEach(closeAllHosts);

describe("committed before seen", () => {
  it("a subscriber hears of an event only once it is in the journal, with the seq it is stored under", async () => {
    const { host, workDir, dataDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    // Another connection, as a restarted host would read the file.
    const reader = new Database(join(dataDir, "berth.sqlite"), { readonly: true });
    const stored = reader.prepare<[string, number], { kind: string; payload: string }>(
      "SELECT kind, payload FROM events WHERE session_id = ? AND seq = ?",
    );
    const missing: string[] = [];
    let heard = 0;
    host.subscribe(session.id, (event: SessionEvent) => {
      if (!("seq" in event)) return;
      heard++;
      const row = stored.get(session.id, event.seq);
      if (!row) missing.push(`${event.type} ${event.seq}`);
      else if (
        event.type === "update" &&
        JSON.stringify(JSON.parse(row.payload).params?.update ?? JSON.parse(row.payload).update) !== JSON.stringify(event.notification.update)
      ) {
        missing.push(`update ${event.seq}: another payload`);
      }
    });
    try {
      await host.prompt(session.id, text("/flood 2000 64"));
      await host.prompt(session.id, text("and an echo"));
      expect(heard).toBeGreaterThan(2_000);
      expect(missing).toEqual([]);
    } finally {
      reader.close();
    }
  });

  it("a question reaches clients once its row and its question_asked event are stored, together", async () => {
    const { host, workDir, dataDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    const reader = new Database(join(dataDir, "berth.sqlite"), { readonly: true });
    const checks: Array<{ row: boolean; event: boolean }> = [];
    host.subscribe(session.id, (event) => {
      if (event.type !== "question_asked") return;
      const row = reader.prepare("SELECT 1 FROM questions WHERE id = ?").get(event.question.id) !== undefined;
      const asked = reader
        .prepare<[string], { payload: string }>("SELECT payload FROM events WHERE session_id = ? AND kind = 'question_asked'")
        .all(session.id)
        .some((e) => JSON.parse(e.payload).questionId === event.question.id);
      checks.push({ row, event: asked });
    });
    try {
      const turn = host.prompt(session.id, text("/ask Shall I?"));
      await waitUntil(() => checks.length > 0, "the question was asked");
      expect(checks).toEqual([{ row: true, event: true }]);
      const [question] = host.pendingQuestions(session.id);
      const answered = await host.answerQuestion(question!.id, {
        optionId: (question!.request as { options: Array<{ optionId: string }> }).options[0]!.optionId,
      });
      expect(answered.state).toBe("answered");
      // The answer and its event were stored before the call returned.
      const resolved = reader.prepare("SELECT count(*) AS n FROM events WHERE session_id = ? AND kind = 'question_resolved'").get(session.id) as {
        n: number;
      };
      expect(resolved.n).toBe(1);
      await turn;
    } finally {
      reader.close();
    }
  });

  it("a record listener hears of a lifecycle record only once it is stored, under the id it is stored with", async () => {
    const { host, workDir, dataDir } = await startHost();
    const reader = new Database(join(dataDir, "berth.sqlite"), { readonly: true });
    const stored = reader.prepare<[number], { kind: string; payload: string; at: number }>(
      "SELECT kind, payload, at FROM lifecycle_records WHERE id = ?",
    );
    const heard: string[] = [];
    const missing: string[] = [];
    host.onRecord(({ id, at, record }) => {
      heard.push(record.kind);
      const row = stored.get(id);
      if (!row || row.kind !== record.kind || row.at !== at || row.payload !== JSON.stringify(record)) missing.push(`${id} ${record.kind}`);
    });
    try {
      const session = await host.createSession({ cwd: workDir });
      await host.prompt(session.id, text("hello"));
      await host.deleteSession(session.id);
      await waitUntil(() => heard.includes("session_deleted"), "the deletion was heard");
      expect(heard).toEqual(expect.arrayContaining(["location_booted", "child_acquired", "turn_started", "turn_ended", "child_released"]));
      expect(missing).toEqual([]);
    } finally {
      reader.close();
    }
  });

  it("numbers go on after a restart from what is stored; the journal reads back every update as it was relayed", async () => {
    const fixture = await startHost();
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    const relayed: unknown[] = [];
    fixture.host.subscribe(session.id, (event) => {
      if (event.type === "update")
        relayed.push(
          event.notification._meta ? { update: event.notification.update, _meta: event.notification._meta } : { update: event.notification.update },
        );
    });
    await fixture.host.prompt(session.id, text("hello"));
    const before = fixture.host.events(session.id);
    expect(before.filter((e) => e.kind === "update").map((e) => e.payload)).toEqual(relayed);
    const host = await fixture.restart();
    await host.prompt(session.id, text("again"));
    const after = host.events(session.id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => i + 1));
  });
});
