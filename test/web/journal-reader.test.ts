import { describe, expect, it } from "vitest";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import type { ReadEvent } from "../../web/src/api/types.js";
import { JournalReader, journalPlace, type JournalReaderHooks } from "../../web/src/chat/journal-reader.js";
import { Transcript } from "../../web/src/chat/transcript.js";

const chunk = (text: string) => ({ sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text } }) as const;

/** A session's journal as Berth serves it: `pageSize` events a page, each read answered when the test says (or at once). */
class Journal {
  readonly events: ReadEvent[] = [];
  /** The `after` of each page asked for. */
  readonly asked: number[] = [];
  private gated: (() => void)[] | null = null;

  constructor(private readonly pageSize = 2) {}

  append(...texts: string[]): void {
    for (const text of texts) {
      this.events.push({ sessionId: "s", seq: this.events.length + 1, kind: "update", payload: { update: chunk(text) } as never, at: 0 });
    }
  }

  /** The update with `seq` as it comes live over ACP. */
  live(seq: number): SessionNotification {
    const { payload } = this.events[seq - 1]!;
    return { sessionId: "s", update: (payload as { update: SessionNotification["update"] }).update, _meta: { "berth/seq": seq } };
  }

  /** From now on, pages are answered only by `release`. */
  gate(): void {
    this.gated = [];
  }

  async release(): Promise<void> {
    await expect.poll(() => this.gated?.length ?? 0).toBeGreaterThan(0);
    const waiting = this.gated!;
    this.gated = null;
    for (const answer of waiting) answer();
  }

  readonly readPage = (after: number, limit: number): Promise<{ events: ReadEvent[]; more: boolean }> => {
    this.asked.push(after);
    const page = (): { events: ReadEvent[]; more: boolean } => {
      const events = this.events.filter((event) => event.seq > after).slice(0, Math.min(limit, this.pageSize));
      const last = events.at(-1)?.seq ?? after;
      return { events, more: this.events.some((event) => event.seq > last) };
    };
    // What the journal has when asked: what is journaled while the answer is on its way comes in the next page.
    const answer = page();
    if (this.gated === null) return Promise.resolve(answer);
    const gated = this.gated;
    return new Promise((resolve) => gated.push(() => resolve(answer)));
  };
}

function reader(journal: Journal, hooks: Partial<JournalReaderHooks> = {}) {
  const transcript = new Transcript();
  const seen = { caughtUp: 0, failures: [] as unknown[] };
  const journalReader = new JournalReader(transcript, {
    readPage: journal.readPage,
    mayRefresh: () => true,
    closed: () => false,
    usage: () => undefined,
    caughtUp: () => seen.caughtUp++,
    failed: (error) => seen.failures.push(error),
    yieldToPage: () => new Promise((resolve) => setImmediate(resolve)),
    ...hooks,
  });
  const text = (): string =>
    transcript.entries
      .map((entry) => {
        const segments = (entry as unknown as { segments: { blocks: string[]; tail: string } }).segments;
        return segments.blocks.join("") + segments.tail;
      })
      .join("|");
  return { transcript, reader: journalReader, seen, text };
}

describe("reading the journal into the transcript", () => {
  it("reads it page by page on from what is shown, then reads only what came after", async () => {
    const journal = new Journal(2);
    journal.append("a", "b", "c", "d", "e");
    const { reader: r, transcript, seen, text } = reader(journal);
    await r.catchUp();
    expect(journal.asked).toEqual([0, 2, 4]);
    expect(text()).toBe("abcde");
    expect(transcript.lastSeq).toBe(5);
    expect(seen.caughtUp).toBe(1);
    journal.append("f", "g");
    r.refresh();
    await expect.poll(() => seen.caughtUp).toBe(2);
    await r.refreshed();
    expect(journal.asked).toEqual([0, 2, 4, 5]);
    expect(text()).toBe("abcdefg");
  });

  it("holds live updates that come while a page is read, and applies each once after it", async () => {
    const journal = new Journal(10);
    journal.append("a", "b", "c");
    const { reader: r, text } = reader(journal);
    journal.gate();
    const read = r.catchUp();
    await expect.poll(() => journal.asked).toEqual([0]);
    // Journaled after the page was asked for, told live before it came.
    journal.append("d");
    r.live(journal.live(4), journalPlace(journal.live(4))!);
    expect(text()).toBe("");
    await journal.release();
    await read;
    expect(text()).toBe("abcd");
  });

  it("reads the gap before a live update that is ahead of what is shown, and applies the next one at once", async () => {
    const journal = new Journal(10);
    journal.append("a", "b", "c");
    const { reader: r, seen, text } = reader(journal);
    await r.catchUp();
    journal.append("d", "e");
    r.live(journal.live(5), journalPlace(journal.live(5))!);
    await expect.poll(() => text()).toBe("abcde");
    expect(journal.asked).toEqual([0, 3]);
    journal.append("f");
    r.live(journal.live(6), journalPlace(journal.live(6))!);
    expect(text()).toBe("abcdef");
    expect(journal.asked).toEqual([0, 3]);
    expect(seen.caughtUp).toBe(2);
  });

  it("reads once more, not once per ask, for refreshes asked while one runs", async () => {
    const journal = new Journal(10);
    journal.append("a");
    const { reader: r, seen, text } = reader(journal);
    journal.gate();
    r.refresh();
    await expect.poll(() => journal.asked).toEqual([0]);
    journal.append("b");
    r.refresh();
    r.refresh();
    await journal.release();
    await expect.poll(() => seen.caughtUp).toBe(2);
    await r.refreshed();
    expect(journal.asked).toEqual([0, 1]);
    expect(text()).toBe("ab");
  });

  it("tells a read that failed, and reads nothing while refreshing is not allowed", async () => {
    const refused = new Error("Berth cannot be reached");
    const { reader: failing, seen } = reader(new Journal(), { readPage: () => Promise.reject(refused) });
    failing.refresh();
    await expect.poll(() => seen.failures).toEqual([refused]);
    await expect(failing.catchUp()).rejects.toBe(refused);

    const journal = new Journal();
    journal.append("a");
    const { reader: held } = reader(journal, { mayRefresh: () => false });
    held.refresh();
    await held.refreshed();
    expect(journal.asked).toEqual([]);
  });
});
