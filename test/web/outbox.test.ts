import { describe, expect, it } from "vitest";
import {
  nextToSend,
  reconciled,
  toFront,
  withEdited,
  withEditing,
  withQueued,
  withSendEnded,
  withState,
  type Outbox,
} from "../../web/src/chat/outbox.js";

/** Three messages typed in order, the first sent after seq 4, the others after seq 7. */
function typed(): Outbox {
  return withQueued(withQueued(withQueued([], 1, "first", 4), 2, "second", 7), 3, "third", 7);
}

const ids = (outbox: Outbox): number[] => outbox.map((message) => message.id);
const states = (outbox: Outbox): string[] => outbox.map((message) => `${message.id}:${message.state}`);

describe("the chat's outbox", () => {
  it("sends messages in the order they were typed", () => {
    const outbox = typed();
    expect(ids(outbox)).toEqual([1, 2, 3]);
    expect(nextToSend(outbox)?.id).toBe(1);
    expect(nextToSend(withSendEnded(outbox, 1, { name: "turn-started" }))?.id).toBe(2);
    expect(nextToSend([])).toBeNull();
  });

  it("skips messages on their way or refused, and sends nothing while the first waiting one is edited", () => {
    const sending = withState(typed(), 1, { state: "sending", tried: true });
    expect(nextToSend(sending)?.id).toBe(2);
    const editing = withEditing(sending, 2);
    expect(states(editing)).toEqual(["1:sending", "2:editing", "3:queued"]);
    // The third was typed after the second: it does not overtake it while it is edited.
    expect(nextToSend(editing)).toBeNull();
    expect(nextToSend(withEdited(editing, 2, "second, edited"))?.text).toBe("second, edited");
    expect(nextToSend(withEdited(editing, 2, null))?.text).toBe("second");
  });

  it("edits only a queued message, ends only an edit under way, and removes a message edited to nothing", () => {
    const sending = withState(typed(), 1, { state: "sending", tried: true });
    expect(withEditing(sending, 1)).toBe(sending);
    expect(withEdited(sending, 2, "not being edited")).toBe(sending);
    expect(ids(withEdited(withEditing(sending, 2), 2, "  "))).toEqual([1, 3]);
  });

  it("puts a message first to go out next, queued again without its error", () => {
    const failed = withSendEnded(withState(typed(), 3, { state: "sending", tried: true }), 3, { name: "refused", reason: "no agent" });
    expect(failed.find((message) => message.id === 3)).toMatchObject({ state: "failed", error: "no agent" });
    const front = toFront(failed, 3);
    expect(states(front)).toEqual(["3:queued", "1:queued", "2:queued"]);
    expect(front[0]?.error).toBeNull();
    expect(nextToSend(front)?.id).toBe(3);
  });

  it("queues a message cut off again in its place, and drops one whose turn started", () => {
    const sending = withState(typed(), 1, { state: "sending", tried: true });
    expect(states(withSendEnded(sending, 1, { name: "cut-off" }))).toEqual(["1:queued", "2:queued", "3:queued"]);
    expect(ids(withSendEnded(sending, 1, { name: "turn-started" }))).toEqual([2, 3]);
  });

  it("leaves to the transcript the messages whose turn the journal has, and marks one still sending as started", () => {
    let outbox = withState(typed(), 1, { state: "sending", tried: true });
    // The second was sent, cut off and queued again, but its turn reached Berth: it is not sent twice.
    outbox = withState(outbox, 2, { state: "queued", tried: true });
    const inJournal = new Set(["first", "second", "third"]);
    const after = reconciled(outbox, (message) => inJournal.has(message.text));
    // The third was never sent: a turn with its text is someone else's.
    expect(states(after)).toEqual(["1:started", "3:queued"]);
    expect(reconciled(after, (message) => inJournal.has(message.text))).toBe(after);
    expect(reconciled(outbox, () => false)).toBe(outbox);
  });
});
