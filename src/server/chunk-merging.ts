import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { JournalEvent, ReadEvent } from "../host/views.js";

/** The most text one merged chunk carries, in UTF-16 code units (a string's `length`). */
const MERGED_CHUNK_CHARS = 64 * 1024;

type TextChunk = Extract<SessionUpdate, { sessionUpdate: "agent_message_chunk" | "user_message_chunk" | "agent_thought_chunk" }>;

/** A journaled update as the journal and the session bus carry it. */
interface JournaledUpdate {
  readonly update: SessionUpdate;
  readonly _meta?: Record<string, unknown> | null;
}

/** Consecutive chunks joined: one update standing for journal seqs `from` to `to`. */
export interface MergedChunk {
  readonly update: SessionUpdate;
  readonly from: number;
  readonly to: number;
}

interface Run {
  readonly first: TextChunk;
  readonly texts: string[];
  readonly from: number;
  to: number;
  chars: number;
}

/**
 * Joins consecutive plain text chunks of one message (same kind and message id, no `_meta`, no
 * annotations, seqs with no gap between them) into one chunk of at most 65,536 UTF-16 code units of text. An agent
 * streams a long reply as hundreds of thousands of chunks; a browser takes a few thousand messages
 * a second and a page applying each one pays per chunk. Used for live updates to a client that reads
 * the journal itself (`berth/journalSeq`) and for the journal read over REST with `merge=chunks`.
 */
export class ChunkMerger {
  private run: Run | null = null;

  /**
   * Offers the journaled update numbered `seq`. `taken`: it is now part of the run being merged
   * (else the caller sends it as it is); `done`: a run it ended, to be sent before it.
   */
  add(seq: number, journaled: JournaledUpdate): { readonly taken: boolean; readonly done: MergedChunk | null } {
    const update = journaled.update;
    if (!isPlainTextChunk(update) || journaled._meta) return { taken: false, done: this.flush() };
    const text = (update.content as { text: string }).text;
    const run = this.run;
    if (
      run &&
      run.to === seq - 1 &&
      run.first.sessionUpdate === update.sessionUpdate &&
      run.first.messageId === update.messageId &&
      run.chars + text.length <= MERGED_CHUNK_CHARS
    ) {
      run.texts.push(text);
      run.to = seq;
      run.chars += text.length;
      return { taken: true, done: null };
    }
    const done = this.flush();
    this.run = { first: update, texts: [text], from: seq, to: seq, chars: text.length };
    return { taken: true, done };
  }

  /** Ends the run being merged; null if there is none. */
  flush(): MergedChunk | null {
    const run = this.run;
    if (!run) return null;
    this.run = null;
    const { first, texts, from, to } = run;
    return { update: { ...first, content: { type: "text", text: texts.join("") } } as SessionUpdate, from, to };
  }
}

/**
 * A page of the journal with the chunks a {@link ChunkMerger} joins merged: every other event as it
 * is. A merged event carries the last chunk's `seq` and `at`, and the first one's seq as `seqFrom`;
 * reading on after its `seq` loses and repeats nothing.
 */
export function mergedEvents(events: readonly JournalEvent[]): ReadEvent[] {
  const merger = new ChunkMerger();
  const read: ReadEvent[] = [];
  let lastTakenAt = 0;
  const emit = (done: MergedChunk | null): void => {
    if (!done) return;
    const { sessionId } = events[0]!;
    const event = { sessionId, seq: done.to, kind: "update", payload: { update: done.update } as never, at: lastTakenAt };
    read.push(done.from === done.to ? event : { ...event, seqFrom: done.from });
  };
  for (const event of events) {
    if (event.kind !== "update") {
      emit(merger.flush());
      read.push(event);
      continue;
    }
    const { taken, done } = merger.add(event.seq, event.payload as unknown as JournaledUpdate);
    emit(done);
    if (taken) lastTakenAt = event.at;
    else read.push(event);
  }
  emit(merger.flush());
  return read;
}

/**
 * A text chunk with nothing but its kind, message id and text: merging it loses nothing. The journal
 * keeps what the agent sent as it was (only its kind is checked on the way in), so anything else —
 * no content, a text block without a string `text` — is left unmerged, never read as a text block.
 */
function isPlainTextChunk(update: SessionUpdate): update is TextChunk {
  if (
    update.sessionUpdate !== "agent_message_chunk" &&
    update.sessionUpdate !== "user_message_chunk" &&
    update.sessionUpdate !== "agent_thought_chunk"
  )
    return false;
  const content: unknown = update.content;
  if (update._meta || typeof content !== "object" || content === null) return false;
  const block = content as Record<string, unknown>;
  return block.type === "text" && typeof block.text === "string" && block.annotations == null && block._meta == null;
}
