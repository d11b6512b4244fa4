// The peers' live states (docs/fleet.md, "Live state"), explored with fast-check against a model: after any sequence of
// snapshots, changes, removals and forgotten peers, each peer's state of each session is the last one it said and did
// not take back, and a session is told changed exactly when what some peer says of it changed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PeerLiveViews } from "../../src/host/peer-live-views.js";
import type { LiveSessionState } from "../../src/host/views.js";

const PEERS = ["host-a", "host-b"];
const SESSIONS = ["s1", "s2", "s3"];

const state = (id: string, turnActive: boolean, holders: number): LiveSessionState => ({
  id,
  state: holders > 0 ? "live" : "childless",
  pid: holders > 0 ? 100 + holders : null,
  holders,
  turnActive,
  turnStartedAt: turnActive ? 1_000 : null,
  releaseAt: null,
  preview: holders > 1 ? { role: "agent", text: `said ${holders}`, at: 2_000 } : null,
  lastTurn: null,
});

const anyState = fc
  .tuple(fc.constantFrom(...SESSIONS), fc.boolean(), fc.integer({ min: 0, max: 2 }))
  .map(([id, turnActive, holders]) => state(id, turnActive, holders));
const peer = fc.constantFrom(...PEERS);

type Op =
  | { kind: "replace"; peer: string; states: LiveSessionState[] }
  | { kind: "update"; peer: string; state: LiveSessionState }
  | { kind: "remove"; peer: string; id: string }
  | { kind: "forget"; peer: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("replace" as const),
    peer,
    states: fc.uniqueArray(anyState, { selector: (s) => s.id, maxLength: SESSIONS.length }),
  }),
  fc.record({ kind: fc.constant("update" as const), peer, state: anyState }),
  fc.record({ kind: fc.constant("remove" as const), peer, id: fc.constantFrom(...SESSIONS) }),
  fc.record({ kind: fc.constant("forget" as const), peer }),
);

describe("PeerLiveViews", () => {
  it("holds each peer's last word on each session, and tells exactly the sessions whose state changed", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const told: string[] = [];
        const views = new PeerLiveViews((id) => told.push(id));
        const model = new Map<string, LiveSessionState>();
        const key = (p: string, id: string) => `${p} ${id}`;
        for (const step of ops) {
          const before = new Map(model);
          told.length = 0;
          if (step.kind === "replace") {
            for (const id of SESSIONS) model.delete(key(step.peer, id));
            for (const s of step.states) model.set(key(step.peer, s.id), s);
            views.replace(step.peer, step.states);
          } else if (step.kind === "update") {
            model.set(key(step.peer, step.state.id), step.state);
            views.update(step.peer, step.state);
          } else if (step.kind === "remove") {
            model.delete(key(step.peer, step.id));
            views.remove(step.peer, step.id);
          } else {
            for (const id of SESSIONS) model.delete(key(step.peer, id));
            views.forget(step.peer);
          }
          const changed = new Set<string>();
          for (const p of PEERS)
            for (const id of SESSIONS) {
              expect(views.state(p, id)).toEqual(model.get(key(p, id)));
              if (JSON.stringify(before.get(key(p, id))) !== JSON.stringify(model.get(key(p, id)))) changed.add(id);
            }
          expect(new Set(told)).toEqual(changed);
        }
      }),
      { numRuns: 300 },
    );
  });
});
