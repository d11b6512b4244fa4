import type { ContentBlock, PlanEntry, SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import { NOTICE_META } from "../../../src/protocol/meta-keys.js";
import type { ReadEvent, TerminalOutputResult } from "../api/types.js";
import { appendSegment, emptySegments, type Segments } from "./message-segments.js";
import { questionOf, resolutionOf, type QuestionResolution, type TranscriptQuestion } from "./transcript-questions.js";

type MessageRole = "user" | "agent" | "thought";

export interface ToolCallView {
  readonly toolCallId: string;
  readonly title: string;
  readonly toolKind: string | null;
  readonly status: string;
  readonly content: readonly ToolCallContent[];
  readonly rawOutput: unknown;
}

interface EntryBase {
  /** Stable for the life of the transcript: the key views render it by. */
  readonly id: number;
  /** Bumped on every change, so views know what to render again. */
  version: number;
}

export interface MessageEntry extends EntryBase {
  readonly kind: "message";
  readonly role: MessageRole;
  readonly messageId: string | null;
  /** Written by Berth itself (an interruption, a crash), not by the agent. */
  readonly notice: boolean;
  readonly segments: Segments;
  /** Characters received (the segments may hold a few more: fences closed and reopened at cuts). */
  length: number;
}

interface ToolEntry extends EntryBase {
  readonly kind: "tool";
  call: ToolCallView;
  /** Its terminals' output as last read over REST (Berth sends a holder the output as text only for tool calls it saw start while held). */
  readonly outputs: Map<string, TerminalOutputResult>;
}

interface PlanItemEntry extends EntryBase {
  readonly kind: "plan";
  entries: readonly PlanEntry[];
}

interface TurnEndEntry extends EntryBase {
  readonly kind: "turn-end";
  readonly stopReason: string | null;
  readonly error: string | null;
}

export interface QuestionEntry extends EntryBase {
  readonly kind: "question";
  readonly question: TranscriptQuestion;
  resolution: QuestionResolution | null;
}

/** One thing in a conversation as the chat shows it: streamed chunks are merged into messages. */
export type TranscriptEntry = MessageEntry | ToolEntry | PlanItemEntry | TurnEndEntry | QuestionEntry;

/** What the virtualized view lays out: a message is one row per finished block plus its tail. */
export interface TranscriptRow {
  readonly key: string;
  readonly entry: TranscriptEntry;
  /** For messages: the block index, or -1 for the tail. */
  readonly part: number;
  readonly first: boolean;
  readonly last: boolean;
}

const roleOf = {
  user_message_chunk: "user",
  agent_message_chunk: "agent",
  agent_thought_chunk: "thought",
} as const;

/**
 * A session's conversation, built from its journal (REST) and live updates (ACP): events apply in
 * journal order (`seq`), each once, whichever way it came. It is mutable and versioned, because a
 * long reply is hundreds of thousands of chunks: views read it once per frame, not per chunk.
 */
let transcripts = 0;

export class Transcript {
  /** Unique on the page: keys renderings cached across transcripts. */
  readonly uid = ++transcripts;
  readonly entries: TranscriptEntry[] = [];
  /** The last journal event applied; events up to it are never applied again. */
  lastSeq = 0;
  /** Bumped on every change. */
  version = 0;
  /** A turn started and has not ended, as far as the journal tells. */
  turnRunning = false;
  /** Each turn's prompt text, for telling whether a message sent from this page got its turn. */
  private readonly prompts: Array<{ readonly seq: number; readonly text: string }> = [];
  private nextId = 1;
  private readonly listeners = new Set<() => void>();
  private readonly questions = new Map<string, QuestionEntry>();
  private rowsCache: { version: number; rows: TranscriptRow[] } = { version: -1, rows: [] };

  /**
   * Applies a journal event not applied yet: `applied`; `old` if it was (`seq` at or below
   * {@link lastSeq}); `overlaps` if it is merged chunks (`seqFrom` to `seq`) of which the first were
   * applied already. Their joined text cannot be cut where the applied ones end: nothing is applied,
   * and the caller reads the journal on from {@link lastSeq} instead (a page merges nothing before its start).
   */
  applyEvent(event: ReadEvent): "applied" | "old" | "overlaps" {
    if (event.seq <= this.lastSeq) return "old";
    if (event.seqFrom !== undefined && event.seqFrom <= this.lastSeq) return "overlaps";
    this.lastSeq = event.seq;
    const payload = (event.payload ?? {}) as Record<string, unknown>;
    switch (event.kind) {
      case "update":
        this.update(payload.update as SessionUpdate, payload._meta as Record<string, unknown> | undefined);
        break;
      case "turn_started": {
        this.turnRunning = true;
        const prompt = (payload.prompt as ContentBlock[] | undefined) ?? [];
        this.prompts.push({ seq: event.seq, text: prompt.map(blockText).join("") });
        for (const block of prompt) this.appendText("user", null, blockText(block), false);
        // Two prompts in a row are two messages.
        this.closeMessage();
        break;
      }
      case "turn_ended": {
        this.turnRunning = false;
        const stopReason = typeof payload.stopReason === "string" ? payload.stopReason : null;
        const error = typeof payload.error === "string" ? payload.error : null;
        // A turn that simply ended needs no line of its own.
        if (stopReason !== "end_turn" || error !== null) this.push({ kind: "turn-end", stopReason, error });
        this.closeMessage();
        break;
      }
      case "question_asked": {
        const question = questionOf(payload);
        if (question) this.questions.set(question.id, this.push<QuestionEntry>({ kind: "question", question, resolution: null }));
        break;
      }
      case "question_resolved": {
        const entry = this.questions.get(String(payload.questionId));
        if (entry) {
          entry.resolution = resolutionOf(entry.question, payload);
          this.changed(entry);
        }
        break;
      }
      // `interrupted` and `agent_exited` come with a notice (an update) that says it in words.
    }
    this.touch();
    return "applied";
  }

  /** A `session/update` as ACP sends it. Live updates with a journal seq go through {@link applyEvent}. */
  applyUpdate(update: SessionUpdate, meta?: Record<string, unknown> | null): void {
    if (this.update(update, meta)) this.touch();
  }

  private update(update: SessionUpdate, meta?: Record<string, unknown> | null): boolean {
    switch (update.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        // The journal keeps what the agent sent: a chunk without a content block shows nothing.
        const content: unknown = update.content;
        const text = typeof content === "object" && content !== null ? blockText(content as ContentBlock) : undefined;
        if (typeof text !== "string") return false;
        const notice = isNotice(meta) || isNotice(update._meta);
        this.appendText(roleOf[update.sessionUpdate], update.messageId ?? null, text, notice);
        break;
      }
      case "tool_call":
        this.follow(
          this.push<ToolEntry>({
            kind: "tool",
            call: {
              toolCallId: update.toolCallId,
              title: update.title,
              toolKind: update.kind ?? null,
              status: update.status ?? "pending",
              content: update.content ?? [],
              rawOutput: update.rawOutput,
            },
            outputs: new Map(),
          }),
        );
        break;
      case "tool_call_update":
        this.updateToolCall(update);
        break;
      case "plan": {
        const last = this.entries.at(-1);
        if (last?.kind === "plan") {
          last.entries = update.entries;
          this.changed(last);
        } else {
          this.push({ kind: "plan", entries: update.entries });
        }
        break;
      }
      default:
        return false;
    }
    return true;
  }

  /**
   * The rows to lay out, recomputed only when something changed. A row once made is kept (a finished
   * block never changes): while a long reply streams, a frame makes only its new rows, not hundreds.
   */
  rows(): readonly TranscriptRow[] {
    if (this.rowsCache.version === this.version) return this.rowsCache.rows;
    const rows: TranscriptRow[] = [];
    for (const entry of this.entries) {
      let made = this.madeRows.get(entry);
      if (!made) {
        made = [];
        this.madeRows.set(entry, made);
      }
      if (entry.kind !== "message") {
        made[0] ??= { key: String(entry.id), entry, part: 0, first: true, last: true };
        rows.push(made[0]);
        continue;
      }
      const { blocks, tail } = entry.segments;
      for (let part = made.length; part < blocks.length; part++) {
        made.push({ key: `${entry.id}.${part}`, entry, part, first: part === 0, last: false });
      }
      for (let part = 0; part < blocks.length; part++) rows.push(made[part]!);
      if (tail !== "" || blocks.length === 0) rows.push({ key: `${entry.id}.t`, entry, part: -1, first: blocks.length === 0, last: true });
      // Ending on a finished block (the reply's last cut fell on its end): that row is the message's last.
      else rows[rows.length - 1] = { ...made[blocks.length - 1]!, last: true };
    }
    this.rowsCache = { version: this.version, rows };
    return rows;
  }

  /** Rows made so far, by entry: a message's blocks in order (its tail row is made each time: its flags change). */
  private readonly madeRows = new WeakMap<TranscriptEntry, TranscriptRow[]>();

  /** Listens for changes; called once per batch of changes, synchronously. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether the journal has a turn for this prompt after `afterSeq`. */
  hasTurnFor(text: string, afterSeq: number): boolean {
    for (let i = this.prompts.length - 1; i >= 0 && this.prompts[i]!.seq > afterSeq; i--) if (this.prompts[i]!.text === text) return true;
    return false;
  }

  /** A finished message is never appended to again: the next chunk starts a new message. */
  private closeMessage(): void {
    this.open = null;
  }

  private open: MessageEntry | null = null;

  private appendText(role: MessageRole, messageId: string | null, text: string, notice: boolean): void {
    const last = this.open;
    if (last && last === this.entries.at(-1) && last.role === role && last.messageId === messageId && last.notice === notice) {
      appendSegment(last.segments, text);
      last.length += text.length;
      this.changed(last);
      return;
    }
    const entry = this.push<MessageEntry>({ kind: "message", role, messageId, notice, segments: emptySegments(), length: 0 });
    appendSegment(entry.segments, text);
    entry.length = text.length;
    this.open = entry;
  }

  private updateToolCall(update: Extract<SessionUpdate, { sessionUpdate: "tool_call_update" }>): void {
    const entry = this.entries.findLast((e): e is ToolEntry => e.kind === "tool" && e.call.toolCallId === update.toolCallId);
    const call: ToolCallView = entry?.call ?? {
      toolCallId: update.toolCallId,
      title: "tool call",
      toolKind: null,
      status: "pending",
      content: [],
      rawOutput: undefined,
    };
    const next: ToolCallView = {
      toolCallId: call.toolCallId,
      title: update.title ?? call.title,
      toolKind: update.kind ?? call.toolKind,
      status: update.status ?? call.status,
      // ACP: content in an update replaces the tool call's content.
      content: update.content ?? call.content,
      rawOutput: update.rawOutput ?? call.rawOutput,
    };
    if (entry) {
      entry.call = next;
      this.changed(entry);
      this.follow(entry);
    } else {
      this.follow(this.push<ToolEntry>({ kind: "tool", call: next, outputs: new Map() }));
    }
  }

  /**
   * Tool calls showing a terminal whose output is worth reading: running ones, and finished ones
   * whose output as last read had no exit status (the command's last lines and its end are read once more).
   */
  private readonly followed = new Set<ToolEntry>();

  private follow(entry: ToolEntry): void {
    const { status, content } = entry.call;
    const running = status === "pending" || status === "in_progress";
    const unfinished = [...entry.outputs.values()].some((output) => output.exitStatus === null);
    if (content.some((item) => item.type === "terminal") && (running || unfinished)) this.followed.add(entry);
    else this.followed.delete(entry);
  }

  /** The terminals to read: those of tool calls still running, or whose command was last seen running. */
  terminalsToRead(): string[] {
    return [...this.followed].flatMap((entry) => entry.call.content.flatMap((item) => (item.type === "terminal" ? [item.terminalId] : [])));
  }

  /** A terminal's output as read: shown in the tool calls showing that terminal, if it changed. */
  showTerminal(terminalId: string, output: TerminalOutputResult): void {
    let changed = false;
    for (const entry of [...this.followed]) {
      if (!entry.call.content.some((item) => item.type === "terminal" && item.terminalId === terminalId)) continue;
      const shown = entry.outputs.get(terminalId);
      if (shown && JSON.stringify(shown) === JSON.stringify(output)) continue;
      entry.outputs.set(terminalId, output);
      this.changed(entry);
      this.follow(entry);
      changed = true;
    }
    if (changed) this.touch();
  }

  private push<E extends TranscriptEntry>(entry: DistributiveOmit<E, "id" | "version">): E {
    const full = { ...entry, id: this.nextId++, version: 0 } as unknown as E;
    this.entries.push(full);
    if (full.kind !== "message") this.open = null;
    return full;
  }

  private changed(entry: TranscriptEntry): void {
    entry.version++;
  }

  private touch(): void {
    this.version++;
    for (const listener of this.listeners) listener();
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return "[image]";
    case "audio":
      return "[audio]";
    case "resource_link":
      return `[${block.name}](${block.uri})`;
    case "resource":
      return "text" in block.resource ? block.resource.text : `[resource ${block.resource.uri}]`;
  }
}

function isNotice(meta: { [key: string]: unknown } | null | undefined): boolean {
  return meta != null && NOTICE_META in meta;
}
