import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreInputError, StoreNotFoundError, StoreWriteError } from "../../src/store/errors.js";
import type { JournalEvent } from "../../src/store/events.js";
import { modelRuns } from "../support/model-budget.js";
import {
  LeaseHeldError,
  StaleEpochError,
  type Lease,
  type StoreBackend,
  type StoreChange,
  type UnitOutcome,
  type WriteUnit,
} from "../../src/store/store-backend.js";

/** One database (or file) for one test, and ways to reach it as other clients would. */
export interface ContractDatabase {
  /** The backend the test mostly uses. */
  readonly backend: StoreBackend;
  /** Another client of the same database: another pool (PostgreSQL), another connection (SQLite). */
  client(): Promise<StoreBackend>;
  /** Makes `hostId`'s last heartbeat older than the host TTL, as if it had been silent (paused, dead). */
  silence(hostId: string): Promise<void>;
  /**
   * Whether clients share leases and changes (a fleet: PostgreSQL). SQLite has one host per file,
   * so its leases live in the one client that serves that host; the fencing cases then run with
   * both hosts on that client.
   */
  readonly fleet: boolean;
}

/** Everything a backend of `StoreBackend` promises, run against one of them. */
export function storeContract(name: string, open: () => Promise<ContractDatabase>, close: (db: ContractDatabase) => Promise<void>): void {
  describe(`the store contract: ${name}`, () => {
    let db: ContractDatabase;
    let store: StoreBackend;
    beforeEach(async () => {
      db = await open();
      store = db.backend;
      await store.registerHost({ id: "host-a", url: "http://127.0.0.1:7420" });
    });
    afterEach(async () => {
      await close(db);
    });

    const T0 = Date.UTC(2025, 0, 1);
    const newSession = (id: string, host = "host-a", on = store) =>
      on.createSession({ id, agent: "demo", cwd: "/work/project", createdAt: T0 }, host);
    const update = (text: string, at = T0) => ({
      kind: "update",
      payload: { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
      at,
    });
    const textsOf = (events: readonly JournalEvent[]) =>
      events.map((event) => (event.payload as { update: { content: { text: string } } }).update.content.text);
    const written = (outcomes: readonly UnitOutcome[]) =>
      outcomes.map((outcome) => {
        if (!outcome.ok) throw outcome.error;
        return outcome.seqs;
      });
    const failureOf = (outcome: UnitOutcome | undefined) => {
      if (!outcome || outcome.ok) throw new Error(`expected a refused unit, got ${JSON.stringify(outcome)}`);
      return outcome.error;
    };
    const collect = async (events: AsyncIterable<JournalEvent>) => {
      const all: JournalEvent[] = [];
      for await (const event of events) all.push(event);
      return all;
    };

    describe("the journal", () => {
      it("numbers events 1, 2, 3... per session in the order units were given, and replays them in that order", async () => {
        const a = await newSession("a");
        const b = await newSession("b");
        const seqs = written(
          await store.write([
            { lease: a, events: [update("one"), update("two")] },
            { lease: b, events: [update("b-one")] },
            { lease: a, events: [update("three")] },
          ]),
        );
        expect(seqs).toEqual([[1, 2], [1], [3]]);
        expect(written(await store.write([{ lease: a, events: [update("four"), update("five")] }]))).toEqual([[4, 5]]);
        expect(await store.lastSeq("a")).toBe(5);
        const replayed = await collect(store.replay("a", { pageSize: 2 }));
        expect(replayed.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(textsOf(replayed)).toEqual(["one", "two", "three", "four", "five"]);
        expect(replayed.every((event) => event.sessionId === "a" && event.kind === "update" && event.at === T0)).toBe(true);
        expect(textsOf(await store.readEvents("b"))).toEqual(["b-one"]);
      });

      it("never reuses a seq and leaves no gap where a unit was refused", async () => {
        const a = await newSession("a");
        const refused = await store.write([
          { lease: a, events: [update("one")] },
          // Not JSON-serializable: refused before it reaches the database.
          { lease: a, events: [{ kind: "update", payload: { big: 1n }, at: T0 }] },
          { lease: { ...a, epoch: a.epoch + 7 }, events: [update("stale")] },
          { lease: a, events: [update("two")] },
        ]);
        expect(refused.map((outcome) => outcome.ok)).toEqual([true, false, false, true]);
        expect(written([refused[0]!, refused[3]!])).toEqual([[1], [2]]);
        expect(written(await store.write([{ lease: a, events: [update("three")] }]))).toEqual([[3]]);
        const events = await store.readEvents("a");
        expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
        expect(textsOf(events)).toEqual(["one", "two", "three"]);
      });

      it("stores the seqs a host's journal gave its events (a gap left by a unit that failed stays), and refuses a seq already taken", async () => {
        const a = await newSession("a");
        const at = (seq: number, text: string) => ({ ...update(text), seq });
        // The journal gave 1, 2 and 3; the unit of 2 never reached the store (its connection failed).
        expect(written(await store.write([{ lease: a, events: [at(1, "m1")] }]))).toEqual([[1]]);
        expect(written(await store.write([{ lease: a, events: [at(3, "m3"), at(4, "m4")] }]))).toEqual([[3, 4]]);
        const taken = await store.write([
          { lease: a, events: [at(4, "again")] },
          { lease: a, events: [at(5, "m5")] },
        ]);
        expect(failureOf(taken[0])).toBeInstanceOf(StoreWriteError);
        expect(written([taken[1]!])).toEqual([[5]]);
        // Some events with a seq and some without: refused, nothing stored.
        const [mixed] = await store.write([{ lease: a, events: [at(6, "x"), update("y")] }]);
        expect(failureOf(mixed)).toBeInstanceOf(StoreInputError);
        expect(await store.lastSeq("a")).toBe(5);
        // A resolution at the journal's seq too.
        const question = { id: "q1", kind: "permission" as const, request: {}, askedAt: T0 };
        written(await store.write([{ lease: a, events: [{ kind: "question_asked", payload: { questionId: "q1" }, at: T0, seq: 6 }], question }]));
        expect(await store.resolveQuestion({ questionId: "q1", state: "cancelled", reason: "withdrawn", at: T0, seq: 8 }, a)).toEqual({
          won: true,
          seq: 8,
        });
        const events = await store.readEvents("a");
        expect(events.map((event) => event.seq)).toEqual([1, 3, 4, 5, 6, 8]);
        expect(textsOf(events.slice(0, 4))).toEqual(["m1", "m3", "m4", "m5"]);
        // Drawn again after given ones: after the highest.
        expect(written(await store.write([{ lease: a, events: [update("drawn")] }]))).toEqual([[9]]);
      });

      it("reads the events after a given seq, at most a limit, and replays from there", async () => {
        const a = await newSession("a");
        written(await store.write([{ lease: a, events: Array.from({ length: 10 }, (_, i) => update(`e${i + 1}`)) }]));
        expect((await store.readEvents("a", { after: 7 })).map((event) => event.seq)).toEqual([8, 9, 10]);
        expect((await store.readEvents("a", { after: 2, limit: 3 })).map((event) => event.seq)).toEqual([3, 4, 5]);
        expect(await store.readEvents("a", { after: 10 })).toEqual([]);
        expect((await collect(store.replay("a", { after: 4, pageSize: 3 }))).map((event) => event.seq)).toEqual([5, 6, 7, 8, 9, 10]);
        await expect(store.readEvents("nope")).rejects.toBeInstanceOf(StoreNotFoundError);
        await expect(collect(store.replay("nope"))).rejects.toBeInstanceOf(StoreNotFoundError);
      });

      it("reads an update stored as the agent's whole line (as rows were before the update row) as every update reads", async () => {
        const a = await newSession("a");
        const line = JSON.stringify({
          jsonrpc: "2.0",
          method: "session/update",
          params: { sessionId: "agent-1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } }, _meta: { x: 1 } },
        });
        written(await store.write([{ lease: a, events: [{ kind: "update", text: line, at: T0 }] }]));
        const [event] = await store.readEvents("a");
        expect(event!.payload).toEqual({ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } }, _meta: { x: 1 } });
      });

      it("moves updatedAt only forwards and titles a session only once", async () => {
        const a = await newSession("a");
        written(
          await store.write([
            { lease: a, events: [], touchedAt: T0 + 500, titleIfNone: "first" },
            { lease: a, events: [], touchedAt: T0 + 100, titleIfNone: "second" },
          ]),
        );
        const session = await store.getSession("a");
        expect(session).toMatchObject({ updatedAt: T0 + 500, title: "first" });
      });

      it("refuses a unit for an unknown session", async () => {
        const [outcome] = await store.write([{ lease: { sessionId: "nope", hostId: "host-a", epoch: 1 }, events: [update("x")] }]);
        expect(failureOf(outcome)).toBeInstanceOf(StoreNotFoundError);
      });
    });

    describe("questions", () => {
      const asked = (lease: Lease, id: string): WriteUnit => ({
        lease,
        events: [{ kind: "question_asked", payload: { questionId: id }, at: T0 }],
        question: { id, kind: "permission", request: { options: [{ optionId: "allow" }] }, askedAt: T0 },
      });

      it("stores a question with its event, atomically: a question that cannot be stored takes its event with it", async () => {
        const a = await newSession("a");
        expect(written(await store.write([asked(a, "q1")]))).toEqual([[1]]);
        expect(await store.getQuestion("q1")).toMatchObject({
          id: "q1",
          sessionId: "a",
          state: "pending",
          request: { options: [{ optionId: "allow" }] },
        });

        // q1 again: the question's row is refused, so is its event; the other units of the batch are stored.
        const outcomes = await store.write([{ lease: a, events: [update("before")] }, asked(a, "q1"), { lease: a, events: [update("after")] }]);
        expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, true]);
        expect(failureOf(outcomes[1])).toBeInstanceOf(StoreWriteError);
        const events = await store.readEvents("a");
        expect(events.map((event) => [event.seq, event.kind])).toEqual([
          [1, "question_asked"],
          [2, "update"],
          [3, "update"],
        ]);
        expect((await store.listPendingQuestions("a")).map((question) => question.id)).toEqual(["q1"]);
      });

      it("the first resolution wins and is journaled with it; later ones store nothing", async () => {
        const a = await newSession("a");
        written(await store.write([asked(a, "q1")]));
        const first = await store.resolveQuestion({ questionId: "q1", state: "answered", answer: { optionId: "allow" }, at: T0 + 1 });
        expect(first).toEqual({ won: true, seq: 2 });
        const second = await store.resolveQuestion({ questionId: "q1", state: "cancelled", reason: "too late", at: T0 + 2 });
        expect(second).toEqual({ won: false, seq: null });
        expect(await store.getQuestion("q1")).toMatchObject({ state: "answered", answer: { optionId: "allow" }, reason: null, resolvedAt: T0 + 1 });
        const events = await store.readEvents("a");
        expect(events.map((event) => [event.seq, event.kind, event.payload])).toEqual([
          [1, "question_asked", { questionId: "q1" }],
          [2, "question_resolved", { questionId: "q1", state: "answered", answer: { optionId: "allow" } }],
        ]);
        expect(await store.listPendingQuestions()).toEqual([]);
        await expect(store.resolveQuestion({ questionId: "nope", state: "cancelled", reason: "x", at: T0 })).rejects.toBeInstanceOf(
          StoreNotFoundError,
        );
      });

      it("orphans the pending questions of the sessions a host owns after its restart, each with its question_resolved event", async () => {
        const a = await newSession("a");
        const b = await newSession("b");
        written(await store.write([asked(a, "q1"), asked(a, "q2"), asked(b, "q3"), { lease: a, events: [update("meanwhile")] }]));
        await store.resolveQuestion({ questionId: "q2", state: "answered", answer: { optionId: "allow" }, at: T0 });
        // Another host's session (a fleet): its question is its owner's to orphan, not this host's.
        const other = db.fleet ? await db.client() : undefined;
        if (other) {
          await other.registerHost({ id: "host-b", url: null });
          written(await other.write([asked(await newSession("c", "host-b", other), "q4")]));
        }
        const changes: StoreChange[] = [];
        let woken: () => void = () => undefined;
        const heard = new Promise<void>((resolve) => (woken = resolve));
        const stop = await store.subscribe((change) => {
          changes.push(change);
          if (change.type === "events" && change.sessionId === "b") woken();
        });
        const orphaned = await store.orphanPendingQuestions("host-a", "host restarted", T0 + 5);
        expect(orphaned.map((question) => [question.id, question.state, question.reason, question.resolvedAt])).toEqual([
          ["q1", "orphaned", "host restarted", T0 + 5],
          ["q3", "orphaned", "host restarted", T0 + 5],
        ]);
        expect((await store.listPendingQuestions()).map((question) => question.id)).toEqual(other ? ["q4"] : []);
        // Each resolution with its event, numbered on after the session's last seq: 1, 2, 3... with no gap.
        const resolved = (id: string, state = "orphaned") => ({ questionId: id, state, reason: "host restarted" });
        expect((await store.readEvents("a")).map((event) => [event.seq, event.kind, event.at])).toEqual([
          [1, "question_asked", T0],
          [2, "question_asked", T0],
          [3, "update", T0],
          [4, "question_resolved", T0],
          [5, "question_resolved", T0 + 5],
        ]);
        expect((await store.readEvents("a", { after: 4 }))[0]?.payload).toEqual(resolved("q1"));
        expect((await store.readEvents("b")).map((event) => [event.seq, event.kind, event.payload])).toEqual([
          [1, "question_asked", { questionId: "q3" }],
          [2, "question_resolved", resolved("q3")],
        ]);
        expect([await store.lastSeq("a"), await store.lastSeq("b")]).toEqual([5, 2]);
        expect(written(await store.write([{ lease: a, events: [update("after")] }]))).toEqual([[6]]);
        // Told after the commit, like every write.
        await heard;
        expect(changes).toEqual(
          expect.arrayContaining([
            { type: "question", sessionId: "a", questionId: "q1" },
            { type: "events", sessionId: "b", lastSeq: 2 },
          ]),
        );
        await stop();
        await other?.close();
      });
    });

    describe("fencing: a lease per session, with an epoch", () => {
      /** Host B, on a client of its own where clients share leases (a fleet). */
      const hostB = async () => {
        const b = db.fleet ? await db.client() : store;
        await b.registerHost({ id: "host-b", url: "http://127.0.0.1:7421" });
        return b;
      };

      it("a live owner keeps its sessions; once silent, another host takes them at a higher epoch", async () => {
        const a = await newSession("s");
        expect(a).toEqual({ sessionId: "s", hostId: "host-a", epoch: 1 });
        const b = await hostB();
        await expect(b.acquireLease("s", "host-b")).rejects.toBeInstanceOf(LeaseHeldError);
        // The owner's own acquisition takes it at a new epoch too: a release of its earlier lease matches nothing.
        const renewed = await store.acquireLease("s", "host-a");
        expect(renewed).toEqual({ sessionId: "s", hostId: "host-a", epoch: 2 });
        await expect(store.giveUpLease(a)).rejects.toBeInstanceOf(StaleEpochError);
        expect(await store.getLease("s")).toEqual(renewed);

        await db.silence("host-a");
        await b.heartbeat("host-b");
        const taken = await b.acquireLease("s", "host-b");
        expect(taken).toEqual({ sessionId: "s", hostId: "host-b", epoch: 3 });
        expect(await store.getLease("s")).toEqual(taken);
        expect((await store.listHosts()).map((host) => [host.id, host.alive])).toEqual([
          ["host-a", false],
          ["host-b", true],
        ]);
      });

      it("the stale owner's writes are refused and store nothing; the new owner's are accepted, numbered on", async () => {
        const a = await newSession("s");
        written(await store.write([{ lease: a, events: [update("a-1")] }]));
        const b = await hostB();
        await db.silence("host-a");
        const lease = await b.acquireLease("s", "host-b");

        // Host A wakes up (SIGCONT) and writes with the epoch it had.
        const [stale] = await store.write([{ lease: a, events: [update("a-2")], touchedAt: T0 + 9_000 }]);
        const refusal = failureOf(stale);
        expect(refusal).toBeInstanceOf(StaleEpochError);
        expect(refusal).toMatchObject({ sessionId: "s", epoch: 1, current: { hostId: "host-b", epoch: 2 } });
        await expect(store.updateSession(a, { title: "from a" })).rejects.toBeInstanceOf(StaleEpochError);
        await expect(store.deleteSession(a)).rejects.toBeInstanceOf(StaleEpochError);
        await expect(store.giveUpLease(a)).rejects.toBeInstanceOf(StaleEpochError);

        expect(written(await b.write([{ lease, events: [update("b-1")] }]))).toEqual([[2]]);
        await b.updateSession(lease, { title: "from b", agentState: { modes: ["ask"] } });
        expect(textsOf(await b.readEvents("s"))).toEqual(["a-1", "b-1"]);
        expect(await b.getSession("s")).toMatchObject({ title: "from b", agentState: { modes: ["ask"] }, updatedAt: T0 });
      });

      it("a question cancelled by a stale owner stays pending; an answer from any host is taken", async () => {
        const a = await newSession("s");
        written(
          await store.write([
            {
              lease: a,
              events: [{ kind: "question_asked", payload: {}, at: T0 }],
              question: { id: "q", kind: "permission", request: {}, askedAt: T0 },
            },
          ]),
        );
        const b = await hostB();
        await db.silence("host-a");
        await b.acquireLease("s", "host-b");
        await expect(store.resolveQuestion({ questionId: "q", state: "cancelled", reason: "interrupted", at: T0 }, a)).rejects.toBeInstanceOf(
          StaleEpochError,
        );
        expect((await b.getQuestion("q"))?.state).toBe("pending");
        expect(await store.resolveQuestion({ questionId: "q", state: "answered", answer: { optionId: "allow" }, at: T0 })).toEqual({
          won: true,
          seq: 2,
        });
      });

      it("lists a host's leases; a new incarnation of the host raises the epoch of each, so the earlier one's are stale", async () => {
        const first = await newSession("s1");
        await newSession("s2");
        await newSession("other", "host-c");
        expect(await store.listLeases("host-a")).toEqual([first, { sessionId: "s2", hostId: "host-a", epoch: 1 }]);
        // host-a's process restarts: its registration is a new incarnation.
        const again = await store.registerHost({ id: "host-a", url: null });
        expect(again.incarnation).toBe(2);
        const leases = await store.listLeases("host-a");
        expect(leases.map((lease) => [lease.sessionId, lease.epoch])).toEqual([
          ["s1", 2],
          ["s2", 2],
        ]);
        expect(failureOf((await store.write([{ lease: first, events: [update("old process")] }]))[0])).toBeInstanceOf(StaleEpochError);
        expect(written(await store.write([{ lease: leases[0]!, events: [update("new process")] }]))).toEqual([[1]]);
        expect(await store.getLease("other")).toEqual({ sessionId: "other", hostId: "host-c", epoch: 1 });
      });

      it("the owner orphans a question with its event; every question of a session is listed whatever its state", async () => {
        const a = await newSession("s");
        written(
          await store.write(
            ["q1", "q2"].map((id, i) => ({
              lease: a,
              events: [{ kind: "question_asked", payload: { questionId: id }, at: T0 + i }],
              question: { id, kind: "permission" as const, request: {}, askedAt: T0 + i },
            })),
          ),
        );
        expect(await store.resolveQuestion({ questionId: "q1", state: "orphaned", reason: "host restarted", at: T0 + 5 }, a)).toEqual({
          won: true,
          seq: 3,
        });
        expect((await store.listQuestions("s")).map((question) => [question.id, question.state, question.reason])).toEqual([
          ["q1", "orphaned", "host restarted"],
          ["q2", "pending", null],
        ]);
        expect((await store.readEvents("s", { after: 2 }))[0]).toMatchObject({
          kind: "question_resolved",
          payload: { questionId: "q1", state: "orphaned", reason: "host restarted" },
        });
      });

      it("a released lease writes nothing more; the next acquisition raises the epoch", async () => {
        const a = await newSession("s");
        await store.giveUpLease(a);
        const [outcome] = await store.write([{ lease: a, events: [update("late")] }]);
        expect(failureOf(outcome)).toBeInstanceOf(StaleEpochError);
        expect((await store.getLease("s"))?.hostId).toBeNull();
        const again = await store.acquireLease("s", "host-a");
        expect(again.epoch).toBeGreaterThan(a.epoch);
        expect(written(await store.write([{ lease: again, events: [update("on")] }]))).toEqual([[1]]);
      });
    });

    it("fencing, explored: any sequence of writes, takeovers, releases and silences agrees with the model", async () => {
      const b = db.fleet ? await db.client() : store;
      await b.registerHost({ id: "host-b", url: null });
      const clients = { a: store, b };
      const ids = { a: "host-a", b: "host-b" } as const;
      type Host = keyof typeof ids;
      const host = fc.constantFrom<Host>("a", "b");
      const command = fc.oneof(
        fc.record({ op: fc.constant("write" as const), host }),
        fc.record({ op: fc.constant("acquire" as const), host }),
        fc.record({ op: fc.constant("release" as const), host }),
        // The host falls silent (paused past its TTL) while the other keeps heartbeating.
        fc.record({ op: fc.constant("silence" as const), host }),
        // The host is back (SIGCONT) and heartbeats again.
        fc.record({ op: fc.constant("heartbeat" as const), host }),
      );
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), async (commands) => {
          const sessionId = `explored-${++runs}`;
          const created = await newSession(sessionId);
          // The model: the session's owner and epoch, what each host believes its lease is, who is silent, the journal.
          const model = { owner: "a" as Host | null, epoch: 1, silent: new Set<Host>(), events: [] as string[] };
          const believed: Record<Host, Lease | undefined> = { a: created, b: undefined };
          for (const [index, step] of commands.entries()) {
            const other: Host = step.host === "a" ? "b" : "a";
            const client = clients[step.host];
            if (step.op === "write") {
              const lease = believed[step.host];
              if (!lease) continue;
              const [outcome] = await client.write([{ lease, events: [update(`${step.host}${index}`)] }]);
              if (lease.epoch === model.epoch) {
                model.events.push(`${step.host}${index}`);
                expect(outcome).toEqual({ ok: true, seqs: [model.events.length] });
              } else expect(failureOf(outcome)).toBeInstanceOf(StaleEpochError);
            } else if (step.op === "acquire") {
              const attempt = client.acquireLease(sessionId, ids[step.host]);
              if (model.owner === null || model.owner === step.host || model.silent.has(model.owner)) {
                model.owner = step.host;
                model.epoch++;
                believed[step.host] = await attempt;
                expect(believed[step.host]).toEqual({ sessionId, hostId: ids[step.host], epoch: model.epoch });
              } else await expect(attempt).rejects.toBeInstanceOf(LeaseHeldError);
            } else if (step.op === "release") {
              const lease = believed[step.host];
              if (!lease) continue;
              const attempt = client.giveUpLease(lease);
              if (lease.epoch === model.epoch) {
                await attempt;
                model.owner = null;
                model.epoch++;
              } else await expect(attempt).rejects.toBeInstanceOf(StaleEpochError);
            } else if (step.op === "heartbeat") {
              expect(await client.heartbeat(ids[step.host])).toBe(true);
              model.silent.delete(step.host);
            } else {
              await db.silence(ids[step.host]);
              await clients[other].heartbeat(ids[other]);
              model.silent = new Set([step.host]);
            }
          }
          expect(textsOf(await store.readEvents(sessionId))).toEqual(model.events);
          expect(await store.getLease(sessionId)).toEqual({ sessionId, hostId: model.owner && ids[model.owner], epoch: model.epoch });
          // Both hosts heartbeat again before the next run.
          await store.heartbeat("host-a");
          await b.heartbeat("host-b");
        }),
        // A run costs a millisecond on SQLite, tens of them on PostgreSQL.
        { numRuns: modelRuns(store.kind === "sqlite" ? 300 : 60) },
      );
    });

    it("two clients appending to one session concurrently: every seq once, no gap, each client's order kept", async () => {
      const lease = await newSession("s");
      const other = await db.client();
      // Clients of a fleet share the session's lease; a SQLite client keeps leases of its own (one host per file).
      const otherLease = db.fleet ? lease : await other.acquireLease("s", "host-a");
      const UNITS = 120;
      const run = (client: StoreBackend, name: string, clientLease: Lease) =>
        Promise.all(
          Array.from({ length: UNITS }, (_, i) =>
            client.write([{ lease: clientLease, events: Array.from({ length: 1 + (i % 3) }, (_, j) => update(`${name}:${i}:${j}`)) }]),
          ),
        );
      const [mine, theirs] = await Promise.all([run(store, "one", lease), run(other, "two", otherLease)]);
      const seqs = [...written(mine.flat()).flat(), ...written(theirs.flat()).flat()].sort((x, y) => x - y);
      const total = 2 * Array.from({ length: UNITS }, (_, i) => 1 + (i % 3)).reduce((sum, n) => sum + n, 0);
      expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));

      const events = await store.readEvents("s");
      expect(events.map((event) => event.seq)).toEqual(seqs);
      // A unit's events are consecutive, and each is where its writer was told it is.
      const texts = textsOf(events);
      const told = new Map<string, number>();
      for (const [name, outcomes] of [
        ["one", mine],
        ["two", theirs],
      ] as const) {
        written(outcomes.flat()).forEach((unitSeqs, i) => {
          for (const [j, seq] of unitSeqs.entries()) told.set(`${name}:${i}:${j}`, seq);
        });
      }
      expect(texts.every((text, index) => told.get(text) === index + 1)).toBe(true);
      await other.close();
    });

    it("tells a subscriber of each committed change, after it is committed", async () => {
      const lease = await newSession("s");
      const changes: StoreChange[] = [];
      let woken: () => void = () => undefined;
      const heard = new Promise<void>((resolve) => (woken = resolve));
      const stop = await store.subscribe((change) => {
        changes.push(change);
        if (change.type === "events") woken();
      });
      const writer = db.fleet ? await db.client() : store;
      written(await writer.write([{ lease, events: [update("one"), update("two")] }]));
      await heard;
      expect(changes.filter((change) => change.type === "events")).toEqual([{ type: "events", sessionId: "s", lastSeq: 2 }]);
      // Committed before it is heard of: the reader finds what it was told about.
      expect((await store.readEvents("s")).map((event) => event.seq)).toEqual([1, 2]);
      await stop();
      if (writer !== store) await writer.close();
    });

    describe("sessions, records, process groups, agent profiles", () => {
      it("reads the sessions asked for in one call: each with its lease and pending questions, unknown ids left out", async () => {
        const a = await newSession("a");
        await newSession("b");
        await newSession("c");
        const ask = (id: string, askedAt: number): WriteUnit => ({
          lease: a,
          events: [{ kind: "question_asked", payload: { questionId: id }, at: askedAt }],
          question: { id, kind: "permission", request: {}, askedAt },
        });
        written(await store.write([ask("q2", T0 + 2), ask("q1", T0 + 1)]));
        await store.giveUpLease(await store.getLease("b").then((lease) => lease!));
        const read = await store.readSessions(["b", "nowhere", "a"]);
        expect(read.map((entry) => entry.session.id).sort()).toEqual(["a", "b"]);
        const byId = new Map(read.map((entry) => [entry.session.id, entry]));
        expect(byId.get("a")).toMatchObject({ session: { id: "a", cwd: "/work/project" }, lease: a });
        expect(byId.get("a")!.pendingQuestions.map((question) => question.id)).toEqual(["q1", "q2"]);
        expect(byId.get("b")).toEqual({ session: await store.getSession("b"), lease: await store.getLease("b"), pendingQuestions: [] });
        expect(byId.get("b")!.lease.hostId).toBeNull();
        expect(await store.readSessions([])).toEqual([]);
      });

      it("creates, lists (newest first, by directory), updates and deletes sessions with their journal", async () => {
        const a = await newSession("a");
        await store.createSession({ id: "b", agent: "demo", cwd: "/work/other", workspace: "w", createdAt: T0 + 1 }, "host-a");
        await expect(newSession("a")).rejects.toBeInstanceOf(StoreWriteError);
        await store.updateSession(a, { touchedAt: T0 + 10, agentSessionId: "agent-1", agentRequest: { mcpServers: [] } });
        const worktree = { repository: "/work/project", path: "/data/worktrees/project-c", branch: "berth/c", base: "main", state: "active" };
        const c = await store.createSession({ id: "c", agent: "demo", cwd: worktree.path, worktree, createdAt: T0 - 1 }, "host-a");
        expect((await store.getSession("c"))?.worktree).toEqual(worktree);
        await store.updateSession(c, { worktree: { ...worktree, state: "discarded" } });
        expect((await store.getSession("c"))?.worktree).toEqual({ ...worktree, state: "discarded" });
        await store.deleteSession(c);
        expect((await store.listSessions()).map((session) => session.id)).toEqual(["a", "b"]);
        expect((await store.listSessions({ cwd: "/work/other" })).map((session) => [session.id, session.workspace])).toEqual([["b", "w"]]);
        expect(await store.getSession("a")).toEqual({
          id: "a",
          agent: "demo",
          cwd: "/work/project",
          workspace: null,
          title: null,
          agentSessionId: "agent-1",
          agentRequest: { mcpServers: [] },
          agentState: null,
          worktree: null,
          createdAt: T0,
          updatedAt: T0 + 10,
        });
        written(await store.write([{ lease: a, events: [update("x")] }]));
        await store.deleteSession(a);
        expect(await store.getSession("a")).toBeUndefined();
        expect(await store.getLease("a")).toBeUndefined();
        await expect(store.readEvents("a")).rejects.toBeInstanceOf(StoreNotFoundError);
      });

      it("reads sessions a page at a time by keyset: each once, in the list's order, ties broken by id", async () => {
        // c, a, b tie on both times (the id orders them); e is older but touched since; f is another agent's elsewhere.
        for (const id of ["c", "a", "b"]) await newSession(id);
        await newSession("d");
        await store.updateSession(await store.getLease("d").then((lease) => lease!), { touchedAt: T0 + 1 });
        const e = await store.createSession({ id: "e", agent: "demo", cwd: "/work/project", createdAt: T0 - 5 }, "host-a");
        await store.updateSession(e, { touchedAt: T0 + 5 });
        await store.createSession({ id: "f", agent: "other", cwd: "/work/other", createdAt: T0 - 1 }, "host-a");
        const keyOf = (session: { updatedAt: number; createdAt: number; id: string }) => ({
          updatedAt: session.updatedAt,
          createdAt: session.createdAt,
          id: session.id,
        });
        const pages = async (query: { cwd?: string; agent?: string }, limit: number) => {
          const read: string[][] = [];
          let after: ReturnType<typeof keyOf> | undefined;
          for (;;) {
            const page = await store.sessionPage({ ...query, ...(after ? { after } : {}), limit });
            if (page.length === 0) return read;
            read.push(page.map((session) => session.id));
            after = keyOf(page.at(-1)!);
          }
        };
        expect((await store.listSessions()).map((session) => session.id)).toEqual(["e", "d", "a", "b", "c", "f"]);
        expect(await pages({}, 2)).toEqual([
          ["e", "d"],
          ["a", "b"],
          ["c", "f"],
        ]);
        expect(await pages({}, 4)).toEqual([
          ["e", "d", "a", "b"],
          ["c", "f"],
        ]);
        expect(await pages({ cwd: "/work/project" }, 3)).toEqual([
          ["e", "d", "a"],
          ["b", "c"],
        ]);
        expect(await pages({ agent: "other" }, 3)).toEqual([["f"]]);
        expect(await pages({ cwd: "/work/other", agent: "demo" }, 3)).toEqual([]);
        // A page is the list's sessions as they are, not a summary of them.
        expect(await store.sessionPage({ limit: 1 })).toEqual([await store.getSession("e")]);
        await expect(store.sessionPage({ limit: -1 })).rejects.toBeInstanceOf(StoreInputError);
        // A forged place is refused here, never a bad parameter of the database (PostgreSQL: a bigint overflow, a NUL in text).
        const place = { updatedAt: T0, createdAt: T0, id: "a" };
        for (const forged of [
          { updatedAt: 2 ** 63 },
          { createdAt: Number.MAX_SAFE_INTEGER + 1 },
          { updatedAt: -1 },
          { createdAt: Number.NaN },
          { updatedAt: Number.POSITIVE_INFINITY },
          { createdAt: 1.5 },
          { id: "" },
          { id: "a\0b" },
        ]) {
          await expect(store.sessionPage({ after: { ...place, ...forged }, limit: 1 }), JSON.stringify(forged)).rejects.toBeInstanceOf(
            StoreInputError,
          );
        }
      });

      it("keeps lifecycle records in order, never reusing an id", async () => {
        const first = await store.appendRecord("host-a", "location_evicted", { directory: "/w" }, T0);
        const second = await store.appendRecord("host-a", "child_released", { pid: 4 }, T0 + 10);
        expect(second).toBeGreaterThan(first);
        expect((await store.recentRecords(1)).map((record) => record.kind)).toEqual(["child_released"]);
        expect(await store.recordsAfter(first)).toEqual([{ id: second, at: T0 + 10, kind: "child_released", payload: { pid: 4 } }]);
        expect(await store.pruneRecordsBefore("host-a", T0 + 5)).toBe(1);
        const third = await store.appendRecord("host-a", "child_acquired", {}, T0 + 20);
        expect(third).toBeGreaterThan(second);
      });

      it("keeps a session's review comments: added, edited while unsent, marked sent once (then kept as sent), deleted, gone with the session", async () => {
        const lease = await newSession("a");
        await newSession("b");
        const comment = { sessionId: "a", path: "src/a.ts", line: 12, side: "new" as const, body: "why?", createdAt: T0 };
        await store.addReviewComment({ ...comment, id: "c1" });
        await store.addReviewComment({ ...comment, id: "c2", line: 3, side: "old", createdAt: T0 + 1 });
        await store.addReviewComment({ ...comment, id: "c3", sessionId: "b" });
        await expect(store.addReviewComment({ ...comment, id: "c4", sessionId: "nope" })).rejects.toBeInstanceOf(StoreNotFoundError);
        await expect(store.addReviewComment({ ...comment, id: "c5", line: 0 })).rejects.toBeInstanceOf(StoreInputError);
        await expect(store.addReviewComment({ ...comment, id: "c6", side: "left" as "new" })).rejects.toBeInstanceOf(StoreInputError);
        expect(await store.editReviewComment("c1", "why this?")).toBe(true);
        expect(await store.markReviewCommentsSent(["c1", "c3"], T0 + 5)).toBe(2);
        expect(await store.markReviewCommentsSent(["c1"], T0 + 9)).toBe(0);
        expect(await store.editReviewComment("c1", "changed after sending")).toBe(false);
        expect(await store.editReviewComment("missing", "x")).toBe(false);
        expect(await store.listReviewComments("a")).toEqual([
          { ...comment, id: "c1", body: "why this?", sentAt: T0 + 5 },
          { ...comment, id: "c2", line: 3, side: "old", createdAt: T0 + 1, sentAt: null },
        ]);
        expect(await store.deleteReviewComment("c2")).toBe(true);
        expect(await store.deleteReviewComment("c2")).toBe(false);
        await store.deleteSession(lease);
        expect(await store.listReviewComments("a")).toEqual([]);
        expect((await store.listReviewComments("b")).map((kept) => kept.id)).toEqual(["c3"]);
      });

      it("keeps each host's process groups, and agents' initialize answers", async () => {
        const group = { pgid: 4242, kind: "agent" as const, label: "demo", startTicks: 7, bootId: "boot", startedAt: T0 };
        await store.addGroup("host-a", group);
        await store.addGroup("host-a", { ...group, startTicks: 8 });
        expect(await store.listGroups("host-a")).toEqual([{ ...group, startTicks: 8 }]);
        await store.deleteGroup("host-a", 4242);
        await store.deleteGroup("host-a", 4242);
        expect(await store.listGroups("host-a")).toEqual([]);

        await store.putAgentProfile("host-a", { agent: "demo", command: "demo --acp", initialize: { protocolVersion: 1 }, at: T0 });
        expect(await store.getAgentProfile("demo")).toEqual({ agent: "demo", command: "demo --acp", initialize: { protocolVersion: 1 }, at: T0 });
        expect(await store.getAgentProfile("other")).toBeUndefined();
      });
    });
  });
}
