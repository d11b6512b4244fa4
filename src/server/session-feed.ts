import { randomUUID } from "node:crypto";
import {
  methods,
  RequestError,
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  type CreateElicitationRequest,
  type RequestPermissionRequest,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { berthCommand } from "../config/invocation.js";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { QuestionError } from "../host/host-errors.js";
import type { QuestionView } from "../host/views.js";
import type { JournalEvent, QuestionAnswer, RelayedRequest, RelayOutcome, SessionEvent } from "../host/views.js";
import { ChunkMerger, type MergedChunk } from "./chunk-merging.js";
import { answerFromElicitation, answerFromPermission } from "./question-answers.js";
import { TerminalMirror } from "./terminal-mirror.js";
import { JOURNAL_SEQ_META, NOTICE_META, RAW_TERMINALS_META, SEQ_FROM_META, SEQ_META } from "../protocol/meta-keys.js";
import { type ClientNotify, sessionUpdateParams, updateTextFrame } from "./shared-frames.js";
import { EMBEDDED_TERMINALS_META } from "../protocol/embedded-terminals.js";
import { METHOD_NOT_FOUND, REQUEST_CANCELLED } from "../protocol/json-rpc-codes.js";

export interface SessionFeedOptions {
  readonly host: Host;
  readonly sessionId: string;
  /** The client as a holder of the session: updates that follow its own requests are not sent back to it. */
  readonly holderId: string;
  readonly client: AgentContext;
  readonly capabilities: ClientCapabilities;
  readonly log: Logger;
  /**
   * Sends a notification straight to the client's socket. Updates are the hot path of a
   * streaming turn; the SDK's writer costs a stream write and two promise hops per message.
   */
  readonly notify: ClientNotify;
  /**
   * The client's queue, which paces what the feed sends (a WebSocket client's). Without one (Streamable HTTP,
   * whose SDK queue has a limit of its own), every update is sent as it comes.
   */
  readonly queue?: ClientQueue;
}

/** A client's queue as a session feed paces what it sends by it: see MessageLimitedSocket and ClientBufferBudget. */
export interface ClientQueue {
  /** Whether more may be queued for the client now. */
  hasRoom(): boolean;
  /** Settles once the client read enough of its queue to be sent more, or is gone. */
  roomAgain(): Promise<void>;
  /** Counts a feed fed from the journal (for the metrics) until the call returned. */
  behind(): () => void;
}

/** Journal events replayed between two yields to the event loop; and read from it at once by a feed catching up. */
const REPLAY_SLICE = 500;

/**
 * `replaying`: the journal is sent as the session's history (`session/load`); `catching_up`: the client fell behind
 * (it has its share of the client buffer budget queued), and what the bus brought that it was not sent is read
 * from the journal as fast as it reads, `done` ending its count in the metrics; `live`: updates are sent as they
 * come; `closed`: the connection let go of the session. Only while live does an update from the bus reach the
 * client (the journal has every other); anything else the bus brings meanwhile is held, in its place among them.
 */
type FeedState =
  | { readonly name: "replaying" }
  | { readonly name: "catching_up"; readonly done: () => void }
  | { readonly name: "live" }
  | { readonly name: "closed" };

/**
 * One thing to send the client, placed among the journal's events: it goes after seq `after`. `seqs`: the updates
 * it stands for, when it is some (sent only while the client has room; else read from the journal again).
 */
interface Step {
  readonly after: number;
  readonly seqs?: { readonly from: number; readonly to: number };
  /** The journal event it shows (another client's prompt), which a `session/load` replay may have shown already. */
  readonly shows?: number;
  readonly run: () => void | Promise<void>;
}

/**
 * One client connection's view of one session: the journal replayed on `session/load`, then
 * every live update in order, and every question asked of it, withdrawn once someone
 * (this client, another, or an operator) answered it.
 */
export class SessionFeed {
  private state: FeedState = { name: "replaying" };
  private readonly asked = new Map<string, AbortController>();
  /** Sends are chained: the SDK does not promise to keep the order of concurrent notifications. */
  private outbox: Promise<void> = Promise.resolve();
  private readonly unsubscribe: () => void;
  /**
   * The prompts this connection itself sent, by origin, until their `turn_started` came: their prompts are not echoed
   * back to it. One the agent answered before its turn came (it refused it during another turn) is journaled later,
   * after the turn before it ended: it stays `answered` until then (or until the feed ends, for one never journaled).
   */
  private readonly ownPrompts = new Map<string, OwnPrompt>();
  /** The last seq of the journal this client was sent, live or read from the journal (or passed over: not an update). */
  private sentUpTo = 0;
  /** The last seq the `session/load` replay sent as history. */
  private replayedUpTo = 0;
  /** The last seq the bus brought. */
  private publishedUpTo = 0;
  /** What is to be sent while the client is not live, in order: sent as the journal's reading passes its place. */
  private readonly held: Step[] = [];
  /** Told once the feed is live (or closed). */
  private readonly waitingForLive: Array<() => void> = [];
  /** Questions this client cannot show that it was told to answer elsewhere. */
  private readonly toldElsewhere = new Set<string>();
  /** The agent's requests this client took and has not answered; refused if the client leaves first. */
  private readonly relayed = new Map<RelayedRequest, (outcome: RelayOutcome) => void>();

  /** Terminal content turned into output the client can show, unless it asked for terminal ids. */
  private readonly mirror: TerminalMirror | undefined;
  /** The client asked for each update's journal seq. */
  private readonly seqs: boolean;
  /** Chunks being merged for a seq-reading client: sent once the event loop turns, or before anything else. */
  private readonly merger = new ChunkMerger();
  private flushScheduled = false;
  /** The commands this client was last told of (as JSON): the same list again is not sent. */
  private commandsSent: string | undefined;
  /** The session's id as JSON, for frames made of an update's own text. */
  private readonly quotedSessionId: string;

  constructor(private readonly options: SessionFeedOptions) {
    this.unsubscribe = options.host.subscribe(options.sessionId, (event) => this.received(event));
    this.seqs = options.capabilities._meta?.[JOURNAL_SEQ_META] === true;
    this.quotedSessionId = JSON.stringify(options.sessionId);
    if (options.capabilities._meta?.[RAW_TERMINALS_META] !== true) {
      const { host, sessionId } = options;
      this.mirror = new TerminalMirror(
        (terminalId) => host.terminalOutput(sessionId, terminalId),
        (update) => this.enqueue(() => this.notify(update)),
        {
          shown: options.capabilities._meta?.[EMBEDDED_TERMINALS_META] === true ? "as_sent" : "as_text",
          outputLimit: host.config.terminalOutputLimit,
        },
      );
    }
  }

  /** Replays the journal (for `session/load`) and what came meanwhile, then goes live and asks the pending questions. */
  async start({ replay }: { replay: boolean }): Promise<void> {
    if (replay) {
      let sinceYield = 0;
      let commands: HistoryEntry | undefined;
      for (const event of this.options.host.replay(this.options.sessionId)) {
        if (this.state.name === "closed") return;
        this.sentUpTo = event.seq;
        this.replayedUpTo = event.seq;
        // A slow client is waited for (its socket drains) rather than cut for falling behind.
        for (const entry of historyOf(event)) {
          // Every process the session had announced its commands: the client is told the latest, once, after the history.
          if (entry.update.sessionUpdate === "available_commands_update") {
            commands = entry;
            continue;
          }
          await this.room();
          this.notify(entry.update, entry.meta);
        }
        // A long journal must not hold up every other stream this host relays.
        if (++sinceYield === REPLAY_SLICE) {
          sinceYield = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      if (this.state.name !== "replaying") return;
      if (commands) {
        await this.room();
        this.notify(commands.update, commands.meta);
      }
      // What the bus brought during the replay and the replay did not read.
      this.state = { name: "catching_up", done: () => undefined };
      await this.catchUp();
    }
    if (this.state.name === "closed") return;
    this.goLive();
    for (const question of this.options.host.pendingQuestions(this.options.sessionId)) this.ask(question);
  }

  /**
   * Runs this connection's prompt, named by the origin `run` is given; it answers only after the turn's updates were
   * sent, as ACP clients expect.
   */
  async ownPrompt<T>(run: (origin: string) => Promise<T>): Promise<T> {
    const origin = randomUUID();
    this.ownPrompts.set(origin, "awaited");
    try {
      return await run(origin);
    } finally {
      if (this.ownPrompts.get(origin) === "started") this.ownPrompts.delete(origin);
      else this.ownPrompts.set(origin, "answered");
      await this.delivered();
    }
  }

  /** Settles once what the bus brought so far was sent (or, for a client that fell behind, read again from the journal). */
  async delivered(): Promise<void> {
    this.flushMerged();
    await this.outbox;
    await this.live();
  }

  /** What the agent announced about the session (its commands), for a client that resumed it warm. */
  announceState(): void {
    const commands = this.options.host.agentState(this.options.sessionId).availableCommands;
    if (commands === undefined) return;
    this.enqueue(() => this.notify({ sessionUpdate: "available_commands_update", availableCommands: commands } as SessionUpdate));
  }

  close(): void {
    if (this.state.name === "closed") return;
    if (this.state.name === "catching_up") this.state.done();
    this.state = { name: "closed" };
    for (const wake of this.waitingForLive.splice(0)) wake();
    this.unsubscribe();
    this.mirror?.close();
    for (const controller of this.asked.values()) controller.abort();
    this.asked.clear();
    for (const refuse of this.relayed.values()) refuse({ error: new Error("the client left before it answered") });
    this.relayed.clear();
  }

  /** An event read from the journal already: it was committed (and read) before its subscribers were told. */
  private sent(event: SessionEvent): boolean {
    return "seq" in event && event.seq <= this.sentUpTo;
  }

  /** Settles once the feed is live (or closed): a prompt's answer follows every update of its turn. */
  private live(): Promise<void> {
    if (this.state.name === "live" || this.state.name === "closed") return Promise.resolve();
    return new Promise((resolve) => this.waitingForLive.push(resolve));
  }

  private received(event: SessionEvent): void {
    if (this.state.name === "closed" || this.sent(event)) return;
    if ("seq" in event) this.publishedUpTo = Math.max(this.publishedUpTo, event.seq);
    // Claimed at once, so the agent's request knows this client will answer even while the journal replays.
    if (event.type === "agent_request") this.relayed.set(event.request, event.request.claim());
    // A client that is not live is sent the update from the journal.
    if (event.type === "update" && this.state.name !== "live") return;
    this.deliver(event);
  }

  private deliver(event: SessionEvent): void {
    switch (event.type) {
      case "update": {
        // Berth's announcement of what this client's own request changed: the agent told it nothing, nor does Berth.
        if (event.except === this.options.holderId)
          return this.send({ after: event.seq - 1, seqs: { from: event.seq, to: event.seq }, run: () => undefined });
        if (this.seqs && this.merge(event.seq, event.notification)) return;
        const { update, _meta } = event.notification;
        return this.send({
          after: event.seq - 1,
          seqs: { from: event.seq, to: event.seq },
          // Shown with its seq, the update is not what its text says.
          run: () => this.notify(update, this.metaOf(event.seq, _meta), this.seqs ? undefined : event),
        });
      }
      case "agent_request":
        return this.enqueue(() => this.relay(event.request));
      case "agent_notification":
        return this.enqueue(() => void this.options.notify(event.method, event.params));
      case "turn_started":
        if (event.origin !== undefined && this.ownPrompts.has(event.origin)) return this.ownTurnStarted(event.origin);
        if (!this.seqs) this.send({ after: event.seq - 1, shows: event.seq, run: () => this.showPrompt(event.seq) });
        return;
      case "question_asked":
        return this.ask(event.question);
      case "question_resolved":
        return this.withdraw(event.questionId);
      case "turn_ended":
        // The prompting client learns the stop reason from its response.
        return;
    }
  }

  /** This connection's own prompt started its turn: an answered one is done with, an awaited one is now `started`. */
  private ownTurnStarted(origin: string): void {
    if (this.ownPrompts.get(origin) === "answered") this.ownPrompts.delete(origin);
    else this.ownPrompts.set(origin, "started");
  }

  /** Another client's prompt, shown as the user's message, as `session/load` would. */
  private showPrompt(seq: number): void {
    const [event] = this.options.host.events(this.options.sessionId, { after: seq - 1, limit: 1 });
    for (const entry of event ? historyOf(event) : []) this.notify(entry.update, entry.meta);
  }

  /** Puts the agent's request to this client; its answer (or error, code and data intact) goes back. */
  private relay(request: RelayedRequest): void {
    const report = this.relayed.get(request);
    if (!report) return;
    const { client } = this.options;
    // Withdrawn with `$/cancel_request` once another client answered (or the agent gave up), as questions are.
    void client.request<unknown>(request.method, request.params, { cancellationSignal: request.withdrawn, stopWaitingOnCancel: true }).then(
      (result) => {
        this.relayed.delete(request);
        report({ result });
      },
      (error: unknown) => {
        this.relayed.delete(request);
        report({ error });
      },
    );
  }

  private ask(question: QuestionView): void {
    if (this.state.name === "closed" || this.asked.has(question.id)) return;
    const send = this.requestFor(question);
    if (!send) return this.tellElsewhere(question);
    const controller = new AbortController();
    this.asked.set(question.id, controller);
    this.enqueue(async () => {
      if (controller.signal.aborted) return;
      // Not awaited: a question may wait for hours while updates keep flowing.
      void send(controller.signal)
        .then((answer) => {
          if (this.asked.get(question.id) === controller) this.asked.delete(question.id);
          if (answer) this.answer(question.id, answer);
        })
        .catch((error: unknown) => {
          // Withdrawn (answered elsewhere) or the connection closed: nothing to answer.
          // (The connection's close runs the feed's before the request's rejection arrives.)
          if (controller.signal.aborted || this.state.name === "closed") return;
          // A client with no way to show it (-32601) or that gave it up (-32800) leaves it to the others, as with
          // `cancelled`; any other error, or a reply that is no answer, is logged. The question waits either way.
          if (error instanceof RequestError && (error.code === METHOD_NOT_FOUND || error.code === REQUEST_CANCELLED)) return;
          this.refused(question.id, error);
        });
    });
  }

  /** How to ask this client; undefined if it cannot answer this kind of question. */
  private requestFor(question: QuestionView): ((signal: AbortSignal) => Promise<QuestionAnswer | undefined>) | undefined {
    const { client, sessionId, capabilities } = this.options;
    // Withdrawing stops waiting at once; the client's late reply is dropped.
    const options = (signal: AbortSignal) => ({ cancellationSignal: signal, stopWaitingOnCancel: true });
    if (question.kind === "permission") {
      // The agent's own session id is replaced by Berth's, the only one clients know.
      const params: RequestPermissionRequest = { ...(question.request as RequestPermissionRequest), sessionId };
      return async (signal) => answerFromPermission(await client.request(methods.client.session.requestPermission, params, options(signal)));
    }
    const request = question.request as CreateElicitationRequest;
    const mode = request.mode === "url" ? "url" : "form";
    if (!capabilities.elicitation?.[mode]) return undefined;
    const params = ("sessionId" in request ? { ...request, sessionId } : request) as CreateElicitationRequest;
    return async (signal) => answerFromElicitation(await client.request(methods.client.elicitation.create, params, options(signal)));
  }

  /** A question this client cannot show (a form it did not advertise): it is told where to answer, once. */
  private tellElsewhere(question: QuestionView): void {
    if (this.toldElsewhere.has(question.id)) return;
    this.toldElsewhere.add(question.id);
    const text =
      `Berth: the agent asks a question this client cannot show (${question.kind}). ` +
      `Answer it on Berth's dashboard, or with \`${berthCommand()} answer ${question.id} ...\`; this turn waits until then.`;
    this.enqueue(() =>
      this.notify({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text },
        _meta: { [NOTICE_META]: { kind: "question_elsewhere", questionId: question.id } },
      }),
    );
  }

  private answer(questionId: string, answer: QuestionAnswer): void {
    this.options.host.answerQuestion(questionId, answer).catch((error: unknown) => {
      // Another client or an operator was first: theirs stands.
      if (error instanceof QuestionError && error.code === "already_resolved") return;
      this.refused(questionId, error);
    });
  }

  private refused(questionId: string, error: unknown): void {
    this.options.log.warn({ err: error, sessionId: this.options.sessionId, questionId }, "a client's answer was refused");
  }

  private withdraw(questionId: string): void {
    const controller = this.asked.get(questionId);
    this.asked.delete(questionId);
    controller?.abort();
  }

  /**
   * `own`: the bus event whose own text this update and `_meta` are, sent as it is unless a terminal is mirrored; its
   * notification is then the params (Berth's session id, the update, its `_meta`), for a transport that serialises.
   */
  private notify(update: SessionUpdate, meta?: Record<string, unknown> | null, own?: Extract<SessionEvent, { type: "update" }>): void {
    // A reopened session's new process announces the commands the client was just told (from the journal, or on resume).
    if (update.sessionUpdate === "available_commands_update") {
      const commands = JSON.stringify(update.availableCommands);
      if (commands === this.commandsSent) return;
      this.commandsSent = commands;
    }
    const { sessionId } = this.options;
    const shown = this.mirror ? this.mirror.rewrite(update) : update;
    if (own?.text !== undefined && shown === update) {
      own.frame ??= updateTextFrame(this.quotedSessionId, own.text);
      void this.options.notify(methods.client.session.update, own.notification, own.frame);
      return;
    }
    void this.options.notify(methods.client.session.update, sessionUpdateParams(sessionId, shown, meta));
  }

  /** An update's `_meta` as this client is sent it: with its journal seq if it reads them. */
  private metaOf(seq: number, meta: Record<string, unknown> | null | undefined): Record<string, unknown> | null | undefined {
    return this.seqs ? { ...meta, [SEQ_META]: seq } : meta;
  }

  /** Settles once the client has room for more (at once without a queue to pace by). */
  private async room(): Promise<void> {
    const { queue } = this.options;
    while (queue && !this.closed && !queue.hasRoom()) await queue.roomAgain();
  }

  /**
   * The client has its share queued: what it was not sent from `upTo` on is read from the journal as it reads, not
   * kept in memory; what was being merged for it too.
   */
  private fallBehind(upTo: number): void {
    this.merger.flush();
    this.sentUpTo = upTo;
    this.state = { name: "catching_up", done: this.options.queue?.behind() ?? (() => undefined) };
    this.catchUp().then(
      () => this.goLive(),
      (error: unknown) => this.options.log.warn({ err: error, sessionId: this.options.sessionId }, "a client's catching up failed"),
    );
  }

  /**
   * Sends what the bus brought and this client was not sent, read from the journal a page at a time, each once the
   * client has room for it: the same updates, in the same order, as it would have been sent live, and what was held
   * in its place among them. Settles once nothing is left, for the caller to go live in the same turn (nothing
   * comes in between), or once the feed closed.
   */
  private async catchUp(): Promise<void> {
    const { host, sessionId } = this.options;
    // Its own: the live stream's merger is flushed on a timer of its own, which must not take what is read here.
    const merger = new ChunkMerger();
    for (;;) {
      if (this.closed) return;
      const page = host.events(sessionId, { after: this.sentUpTo, limit: REPLAY_SLICE }).filter((event) => event.seq <= this.publishedUpTo);
      if (page.length === 0 && this.held.length === 0) return;
      for (const event of page) {
        if (this.held.length > 0 && this.held[0]!.after < event.seq) {
          await this.sendReadMerged(merger.flush());
          await this.sendHeld(event.seq);
        }
        if (this.closed) return;
        if (event.kind === "update") await this.sendRead(merger, event.seq, event.payload as unknown as JournaledUpdate);
        this.sentUpTo = event.seq;
      }
      await this.sendReadMerged(merger.flush());
      if (page.length === 0) await this.sendHeld(Number.POSITIVE_INFINITY);
      // A client that reads fast must not hold up every other stream this host relays.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Live from now on (unless closed meanwhile): what a prompt's answer waited for. */
  private goLive(): void {
    if (this.state.name === "closed") return;
    if (this.state.name === "catching_up") this.state.done();
    this.state = { name: "live" };
    // Held in the turns between the last look and now (a promise settling): sent first, in order.
    for (const step of this.held.splice(0)) if (!this.shownByReplay(step)) this.send(step);
    for (const wake of this.waitingForLive.splice(0)) wake();
  }

  private get closed(): boolean {
    return this.state.name === "closed";
  }

  /** Sends what was held to go before seq `before`, in order. */
  private async sendHeld(before: number): Promise<void> {
    while (this.held.length > 0 && this.held[0]!.after < before && !this.closed) {
      const step = this.held.shift()!;
      if (!this.shownByReplay(step)) await step.run();
    }
  }

  /** An update read from the journal, sent (or merged) as it would have been live, once the client has room. */
  private async sendRead(merger: ChunkMerger, seq: number, journaled: JournaledUpdate): Promise<void> {
    if (this.seqs) {
      const { taken, done } = merger.add(seq, journaled);
      if (done) await this.sendReadMerged(done);
      if (taken) return;
    }
    await this.room();
    this.notify(journaled.update, this.metaOf(seq, journaled._meta));
  }

  private async sendReadMerged(merged: MergedChunk | null): Promise<void> {
    if (!merged) return;
    await this.room();
    this.notify(merged.update, mergedMeta(merged));
  }

  /**
   * Takes a plain text chunk into the chunk being merged; false if it cannot be merged. A browser
   * receives a few thousand WebSocket messages a second at most, far fewer than an agent streams:
   * merging what was committed together keeps it up with the relay.
   */
  private merge(seq: number, notification: { update: SessionUpdate; _meta?: Record<string, unknown> | null }): boolean {
    const { taken, done } = this.merger.add(seq, notification);
    if (done) this.sendMerged(done);
    // What was committed together is published in one turn of the event loop: the run ends with it.
    if (taken && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flushMerged();
      });
    }
    return taken;
  }

  private flushMerged(): void {
    const done = this.merger.flush();
    if (done) this.sendMerged(done);
  }

  private sendMerged(merged: MergedChunk): void {
    this.send({ after: merged.from - 1, seqs: merged, run: () => this.notify(merged.update, mergedMeta(merged)) });
  }

  /** Sends something that is not an update, in its place after what the bus brought so far. */
  private enqueue(run: () => void | Promise<void>): void {
    // What is being merged was committed first: it goes first.
    this.flushMerged();
    this.send({ after: this.publishedUpTo, run });
  }

  private send(step: Step): void {
    if (this.state.name === "closed") return;
    if (this.state.name !== "live") return this.hold(step);
    this.outbox = this.outbox
      .then(() => this.run(step))
      .catch(() => {
        // The connection closed under the send; its cleanup releases the session.
      });
  }

  /** Sends the step if the feed is still live and (for updates) the client has room; else holds it, or leaves updates to the journal. */
  private run(step: Step): void | Promise<void> {
    if (this.state.name === "closed") return;
    if (this.state.name !== "live") return this.hold(step);
    if (step.seqs) {
      if (this.options.queue?.hasRoom() === false) return this.fallBehind(step.seqs.from - 1);
      this.sentUpTo = step.seqs.to;
    }
    return step.run();
  }

  /** Updates are read from the journal again; anything else waits for its place. */
  private hold(step: Step): void {
    if (!step.seqs) this.held.push(step);
  }

  /** Held while the replay ran, for what the replay then showed itself. */
  private shownByReplay(step: Step): boolean {
    return step.shows !== undefined && step.shows <= this.replayedUpTo;
  }
}

/** Where a connection's own prompt is: sent and awaited, its turn started in the journal, or answered before that. */
type OwnPrompt = "awaited" | "started" | "answered";

/** The `_meta` of a merged chunk: the seqs it stands for. */
function mergedMeta({ from, to }: MergedChunk): Record<string, unknown> {
  return from === to ? { [SEQ_META]: to } : { [SEQ_META]: to, [SEQ_FROM_META]: from };
}

/** An update's payload as the journal keeps it. */
interface JournaledUpdate {
  readonly update: SessionUpdate;
  readonly _meta?: Record<string, unknown> | null;
}

interface HistoryEntry {
  readonly update: SessionUpdate;
  readonly meta?: Record<string, unknown>;
}

/** How a journal event appears in a replayed transcript: prompts as user messages, updates as they were. */
function historyOf(event: JournalEvent): HistoryEntry[] {
  const payload = event.payload as Record<string, unknown> | null;
  if (event.kind === "update") {
    const { update, _meta } = payload as { update: SessionUpdate; _meta?: Record<string, unknown> };
    return [_meta ? { update, meta: _meta } : { update }];
  }
  if (event.kind === "turn_started") {
    const prompt = (payload as { prompt?: ContentBlock[] }).prompt ?? [];
    return prompt.map((content) => ({ update: { sessionUpdate: "user_message_chunk", content } }));
  }
  return [];
}
