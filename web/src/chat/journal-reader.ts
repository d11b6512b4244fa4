import type { SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";
import type { ReadEvent } from "../api/types.js";
import { SEQ_FROM_META, SEQ_META } from "../../../src/protocol/meta-keys.js";
import type { Transcript } from "./transcript.js";

/** Journal events read per REST request (the most Berth serves); consecutive chunks come merged, so far fewer to apply. */
const PAGE = 10_000;
/** The most time spent applying journal events before the page gets a turn. */
const SLICE_MS = 8;

/** A live update's place in the journal: merged chunks `first` to `seq`, and the rest of its `_meta`. */
interface JournalPlace {
  readonly seq: number;
  readonly first: number;
  readonly meta: Record<string, unknown>;
}

/** Where a live update is in the journal; null for one that is not journaled (a running command's output as it grows). */
export function journalPlace(notification: SessionNotification): JournalPlace | null {
  const { [SEQ_META]: seq, [SEQ_FROM_META]: from, ...meta } = notification._meta ?? {};
  if (typeof seq !== "number") return null;
  return { seq, first: typeof from === "number" ? from : seq, meta };
}

export interface JournalReaderHooks {
  /** The journal's events after `after`, at most `limit`; `more`: there are others after them (`api.events`). */
  readonly readPage: (after: number, limit: number) => Promise<{ readonly events: readonly ReadEvent[]; readonly more: boolean }>;
  /** Whether a refresh may read now (not once the page let go, nor while Berth is out of reach). */
  readonly mayRefresh: () => boolean;
  /** The page let go: what is read is not applied. */
  readonly closed: () => boolean;
  /** A usage report read from the journal (the only controls the journal has). */
  readonly usage: (update: SessionUpdate, seq: number) => void;
  /** A read ended with the journal applied up to where it was, and the live updates held meanwhile. */
  readonly caughtUp: () => void;
  /** A refresh could not read the journal. */
  readonly failed: (error: unknown) => void;
  /** Lets the page render and take input between slices of a long read (`yieldToPage`). */
  readonly yieldToPage: () => Promise<void>;
}

/**
 * - `idle`: no refresh under way;
 * - `reading`: one is, and `done` settles after it;
 * - `reading-then-again`: one is, and another was asked for meanwhile: it reads after.
 */
type Refreshing =
  | { readonly name: "idle" }
  | { readonly name: "reading"; readonly done: Promise<void> }
  | { readonly name: "reading-then-again"; readonly done: Promise<void> };

/**
 * The session's journal into the transcript: read over REST in pages from what is shown, merged
 * with the updates that come live over ACP, each event applied once and in order.
 */
export class JournalReader {
  private refreshing: Refreshing = { name: "idle" };
  /** The reads asked for, one after the other. */
  private reading: Promise<void> = Promise.resolve();
  /** Reads asked for and not done: live updates are held meanwhile, so a page never covers what one applied. */
  private pendingReads = 0;
  /** Live updates that arrived while the journal was being read, or ahead of it: applied after. */
  private held: SessionNotification[] = [];

  constructor(
    private readonly transcript: Transcript,
    private readonly hooks: JournalReaderHooks,
  ) {}

  /** Reads what the journal has beyond what is shown; one read at a time, another after it if asked meanwhile. */
  refresh(): void {
    if (!this.hooks.mayRefresh()) return;
    if (this.refreshing.name !== "idle") {
      this.refreshing = { name: "reading-then-again", done: this.refreshing.done };
      return;
    }
    const done = this.catchUp()
      .catch((error: unknown) => this.hooks.failed(error))
      .finally(() => {
        const again = this.refreshing.name === "reading-then-again";
        this.refreshing = { name: "idle" };
        if (again) this.refresh();
      });
    this.refreshing = { name: "reading", done };
  }

  /** Settles once the refresh under way (if any) is done. */
  refreshed(): Promise<void> {
    return this.refreshing.name === "idle" ? Promise.resolve() : this.refreshing.done.catch(() => undefined);
  }

  /** Reads the journal on from what is shown; one read at a time, each after the one before. Rejects with why it could not. */
  catchUp(): Promise<void> {
    this.pendingReads++;
    const read = this.reading.then(() => this.readJournal()).finally(() => this.pendingReads--);
    this.reading = read.catch(() => undefined);
    return read;
  }

  /** A journaled update that came live (at `place`): applied now if it is next, else held until the journal is read up to it. */
  live(notification: SessionNotification, place: JournalPlace): void {
    const { seq, first, meta } = place;
    if (this.pendingReads > 0) {
      this.held.push(notification);
      return;
    }
    if (first !== this.transcript.lastSeq + 1 && seq > this.transcript.lastSeq) {
      // Ahead of what was read (a prompt, a turn's end, a question came between): read the gap first.
      this.held.push(notification);
      this.refresh();
      return;
    }
    this.transcript.applyEvent(journalUpdate(notification, seq, meta, first));
  }

  private async readJournal(): Promise<void> {
    for (;;) {
      const { events, more } = await this.hooks.readPage(this.transcript.lastSeq, PAGE);
      if (this.hooks.closed()) return;
      // A page can be thousands of events (tool calls, chunks Berth could not merge): applied in slices, the page stays responsive.
      let sliceStart = performance.now();
      let overlapped = false;
      for (const event of events) {
        if (performance.now() - sliceStart > SLICE_MS) {
          await this.hooks.yieldToPage();
          if (this.hooks.closed()) return;
          sliceStart = performance.now();
        }
        // Merged chunks of which some are shown already: the next page, read from what is shown, has the rest.
        if (this.transcript.applyEvent(event) === "overlaps") {
          overlapped = true;
          break;
        }
        // Only usage is taken from the journal: a mode or option set by a request is not in it, the host's state has it.
        const update = event.kind === "update" ? (event.payload as { update?: SessionUpdate }).update : undefined;
        if (update?.sessionUpdate === "usage_update") this.hooks.usage(update, event.seq);
      }
      if (!more && !overlapped) break;
      await this.hooks.yieldToPage();
    }
    // What arrived meanwhile was read with the journal, or comes next; a new gap is read again.
    const held = this.held;
    this.held = [];
    for (const [index, notification] of held.entries()) {
      const { seq, first, meta } = journalPlace(notification)!;
      if (seq <= this.transcript.lastSeq) continue;
      if (first !== this.transcript.lastSeq + 1) {
        this.held = held.slice(index);
        this.refresh();
        break;
      }
      this.transcript.applyEvent(journalUpdate(notification, seq, meta, first));
    }
    this.hooks.caughtUp();
  }
}

/** A live update as the journal event it is (merged chunks: `first` to `seq`). */
function journalUpdate(notification: SessionNotification, seq: number, meta: Record<string, unknown>, first: number): ReadEvent {
  const event = { sessionId: notification.sessionId, seq, kind: "update", payload: { update: notification.update, _meta: meta } as never, at: 0 };
  return first < seq ? { ...event, seqFrom: first } : event;
}
