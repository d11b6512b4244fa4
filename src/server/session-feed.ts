import {
  methods,
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
import { RAW_TERMINALS_META, TerminalMirror } from "./terminal-mirror.js";

export interface SessionFeedOptions {
  readonly host: Host;
  readonly sessionId: string;
  readonly client: AgentContext;
  readonly capabilities: ClientCapabilities;
  readonly log: Logger;
  /**
   * Sends a notification straight to the client's socket. Updates are the hot path of a
   * streaming turn; the SDK's writer costs a stream write and two promise hops per message.
   * A promise means the client is behind: it settles once the client caught up.
   */
  readonly notify: (method: string, params: unknown) => void | Promise<void>;
}

/**
 * A client that sets this in its capabilities' `_meta` reads the journal itself (REST): each live
 * update carries its journal seq in `_meta["berth/seq"]`; consecutive text chunks of one message
 * committed together reach it as one chunk whose `_meta["berth/seqFrom"]` is the first seq; other
 * clients' prompts are not echoed to it (it reads them as `turn_started` events). See docs/api.md.
 */
const JOURNAL_SEQ_META = "berth/journalSeq";
const SEQ_META = "berth/seq";
const SEQ_FROM_META = "berth/seqFrom";

/** Journal events replayed between two yields to the event loop. */
const REPLAY_SLICE = 500;

/**
 * `starting`: live events wait while the journal is replayed; `live`: they are sent as they
 * come; `closed`: the connection let go of the session.
 */
type FeedState = { readonly name: "starting"; readonly waiting: SessionEvent[] } | { readonly name: "live" } | { readonly name: "closed" };

/**
 * One client connection's view of one session: the journal replayed on `session/load`, then
 * every live update in order, and every question asked of it, withdrawn once someone
 * (this client, another, or an operator) answered it.
 */
export class SessionFeed {
  private state: FeedState = { name: "starting", waiting: [] };
  private readonly asked = new Map<string, AbortController>();
  /** Sends are chained: the SDK does not promise to keep the order of concurrent notifications. */
  private outbox: Promise<void> = Promise.resolve();
  private readonly unsubscribe: () => void;
  /** Turns this connection itself is prompting: their prompts are not echoed back to it. */
  private ownPrompts = 0;
  /** The last seq the journal's replay sent. */
  private replayedUpTo = 0;
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

  constructor(private readonly options: SessionFeedOptions) {
    this.unsubscribe = options.host.subscribe(options.sessionId, (event) => this.received(event));
    this.seqs = options.capabilities._meta?.[JOURNAL_SEQ_META] === true;
    if (options.capabilities._meta?.[RAW_TERMINALS_META] !== true) {
      const { host, sessionId } = options;
      this.mirror = new TerminalMirror(
        (terminalId) => host.terminalOutput(sessionId, terminalId),
        (update) => this.enqueue(() => this.notify(update)),
      );
    }
  }

  /** Replays the journal (for `session/load`), then goes live and asks the pending questions. */
  async start({ replay }: { replay: boolean }): Promise<void> {
    if (replay) {
      let sinceYield = 0;
      for (const event of this.options.host.replay(this.options.sessionId)) {
        if (this.state.name === "closed") return;
        this.replayedUpTo = event.seq;
        // A slow client is waited for (its socket drains) rather than cut for falling behind.
        for (const entry of historyOf(event)) await this.notify(entry.update, entry.meta, { waitWhileBehind: true });
        // A long journal must not hold up every other stream this host relays.
        if (++sinceYield === REPLAY_SLICE) {
          sinceYield = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }
    if (this.state.name !== "starting") return;
    const waiting = this.state.waiting;
    this.state = { name: "live" };
    for (const event of waiting) if (!this.replayed(event)) this.deliver(event);
    for (const question of this.options.host.pendingQuestions(this.options.sessionId)) this.ask(question);
  }

  /** Runs this connection's prompt; it answers only after the turn's updates were sent, as ACP clients expect. */
  async ownPrompt<T>(run: () => Promise<T>): Promise<T> {
    this.ownPrompts++;
    try {
      return await run();
    } finally {
      this.ownPrompts--;
      await this.outbox;
    }
  }

  /** What the agent announced about the session (its commands), for a client that resumed it warm. */
  announceState(): void {
    const commands = this.options.host.agentState(this.options.sessionId).availableCommands;
    if (commands === undefined) return;
    this.enqueue(() => this.notify({ sessionUpdate: "available_commands_update", availableCommands: commands } as SessionUpdate));
  }

  close(): void {
    if (this.state.name === "closed") return;
    this.state = { name: "closed" };
    this.unsubscribe();
    this.mirror?.close();
    for (const controller of this.asked.values()) controller.abort();
    this.asked.clear();
    for (const refuse of this.relayed.values()) refuse({ error: new Error("the client left before it answered") });
    this.relayed.clear();
  }

  /** An event the replay already sent: it was committed (and read) before its subscribers were told. */
  private replayed(event: SessionEvent): boolean {
    return "seq" in event && event.seq <= this.replayedUpTo;
  }

  private received(event: SessionEvent): void {
    if (this.state.name === "closed" || this.replayed(event)) return;
    // Claimed at once, so the agent's request knows this client will answer even while the journal replays.
    if (event.type === "agent_request") this.relayed.set(event.request, event.request.claim());
    if (this.state.name === "starting") this.state.waiting.push(event);
    else this.deliver(event);
  }

  private deliver(event: SessionEvent): void {
    switch (event.type) {
      case "update": {
        if (this.seqs && this.merge(event.seq, event.notification)) return;
        const meta = this.seqs ? { ...event.notification._meta, [SEQ_META]: event.seq } : event.notification._meta;
        return this.enqueue(() => this.notify(event.notification.update, meta));
      }
      case "agent_request":
        return this.enqueue(async () => this.relay(event.request));
      case "agent_notification":
        return this.enqueue(async () => this.options.notify(event.method, event.params));
      case "turn_started":
        if (this.ownPrompts === 0 && !this.seqs) this.enqueue(() => this.showPrompt(event.seq));
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

  /** Another client's prompt, shown as the user's message, as `session/load` would. */
  private async showPrompt(seq: number): Promise<void> {
    const [event] = this.options.host.events(this.options.sessionId, { after: seq - 1, limit: 1 });
    for (const entry of event ? historyOf(event) : []) await this.notify(entry.update, entry.meta);
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
    if (this.state.name !== "live" || this.asked.has(question.id)) return;
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
        .catch(() => {
          // Withdrawn (answered elsewhere) or the connection closed: nothing to answer.
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
        _meta: { "berth/notice": { kind: "question_elsewhere", questionId: question.id } },
      }),
    );
  }

  private answer(questionId: string, answer: QuestionAnswer): void {
    this.options.host.answerQuestion(questionId, answer).catch((error: unknown) => {
      // Another client or an operator was first: theirs stands.
      if (error instanceof QuestionError && error.code === "already_resolved") return;
      this.options.log.warn({ err: error, sessionId: this.options.sessionId, questionId }, "a client's answer was refused");
    });
  }

  private withdraw(questionId: string): void {
    const controller = this.asked.get(questionId);
    this.asked.delete(questionId);
    controller?.abort();
  }

  private async notify(update: SessionUpdate, meta?: Record<string, unknown> | null, options: { waitWhileBehind?: boolean } = {}): Promise<void> {
    const { sessionId } = this.options;
    const shown = this.mirror ? this.mirror.rewrite(update) : update;
    const behind = this.options.notify(
      methods.client.session.update,
      meta ? { sessionId, update: shown, _meta: meta } : { sessionId, update: shown },
    );
    // A live stream does not wait: a client that stopped reading is cut once too far behind.
    if (options.waitWhileBehind) await behind;
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

  private sendMerged({ update, from, to }: MergedChunk): void {
    const meta = from === to ? { [SEQ_META]: to } : { [SEQ_META]: to, [SEQ_FROM_META]: from };
    this.send(() => this.notify(update, meta));
  }

  private enqueue(send: () => Promise<void>): void {
    // What is being merged was committed first: it goes first.
    this.flushMerged();
    this.send(send);
  }

  private send(send: () => Promise<void>): void {
    this.outbox = this.outbox
      .then(() => (this.state.name === "closed" ? undefined : send()))
      .catch(() => {
        // The connection closed under the send; its cleanup releases the session.
      });
  }
}

/** How a journal event appears in a replayed transcript: prompts as user messages, updates as they were. */
function historyOf(event: JournalEvent): Array<{ update: SessionUpdate; meta?: Record<string, unknown> }> {
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
