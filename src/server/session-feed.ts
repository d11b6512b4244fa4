import {
  methods,
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  type CreateElicitationRequest,
  type RequestPermissionRequest,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { QuestionError } from "../host/question-desk.js";
import type { SessionEvent } from "../host/session-bus.js";
import type { QuestionView } from "../host/views.js";
import { answerFromElicitation, answerFromPermission, type QuestionAnswer } from "../location/question-types.js";
import type { JournalEvent } from "../store/events.js";

export interface SessionFeedOptions {
  readonly host: Host;
  readonly sessionId: string;
  readonly client: AgentContext;
  readonly capabilities: ClientCapabilities;
  readonly log: Logger;
  /**
   * Sends a notification straight to the client's socket. Updates are the hot path of a
   * streaming turn; the SDK's writer costs a stream write and two promise hops per message.
   */
  readonly notify: (method: string, params: unknown) => void;
}

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

  constructor(private readonly options: SessionFeedOptions) {
    this.unsubscribe = options.host.subscribe(options.sessionId, (event) => this.received(event));
  }

  /** Replays the journal (for `session/load`), then goes live and asks the pending questions. */
  async start({ replay }: { replay: boolean }): Promise<void> {
    let replayedUpTo = 0;
    if (replay) {
      let sinceYield = 0;
      for (const event of this.options.host.replay(this.options.sessionId)) {
        if (this.state.name === "closed") return;
        replayedUpTo = event.seq;
        for (const update of historyOf(event)) await this.notify(update);
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
    for (const event of waiting) if (!("seq" in event) || event.seq > replayedUpTo) this.deliver(event);
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

  close(): void {
    if (this.state.name === "closed") return;
    this.state = { name: "closed" };
    this.unsubscribe();
    for (const controller of this.asked.values()) controller.abort();
    this.asked.clear();
  }

  private received(event: SessionEvent): void {
    if (this.state.name === "starting") this.state.waiting.push(event);
    else if (this.state.name === "live") this.deliver(event);
  }

  private deliver(event: SessionEvent): void {
    switch (event.type) {
      case "update":
        return this.enqueue(() => this.notify(event.notification.update));
      case "turn_started":
        if (this.ownPrompts === 0) this.enqueue(() => this.showPrompt(event.seq));
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
    for (const update of event ? historyOf(event) : []) await this.notify(update);
  }

  private ask(question: QuestionView): void {
    if (this.state.name !== "live" || this.asked.has(question.id)) return;
    const send = this.requestFor(question);
    if (!send) return;
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

  private answer(questionId: string, answer: QuestionAnswer): void {
    try {
      this.options.host.answerQuestion(questionId, answer);
    } catch (error) {
      // Another client or an operator was first: theirs stands.
      if (error instanceof QuestionError && error.code === "already_resolved") return;
      this.options.log.warn({ err: error, sessionId: this.options.sessionId, questionId }, "a client's answer was refused");
    }
  }

  private withdraw(questionId: string): void {
    const controller = this.asked.get(questionId);
    this.asked.delete(questionId);
    controller?.abort();
  }

  private async notify(update: SessionUpdate): Promise<void> {
    this.options.notify(methods.client.session.update, { sessionId: this.options.sessionId, update });
  }

  private enqueue(send: () => Promise<void>): void {
    this.outbox = this.outbox.then(() => (this.state.name === "closed" ? undefined : send())).catch(() => {
      // The connection closed under the send; its cleanup releases the session.
    });
  }
}

/** How a journal event appears in a replayed transcript: prompts as user messages, updates as they were. */
function historyOf(event: JournalEvent): SessionUpdate[] {
  const payload = event.payload as Record<string, unknown> | null;
  if (event.kind === "update") return [(payload as { update: SessionUpdate }).update];
  if (event.kind === "turn_started") {
    const prompt = (payload as { prompt?: ContentBlock[] }).prompt ?? [];
    return prompt.map((content) => ({ sessionUpdate: "user_message_chunk", content }));
  }
  return [];
}
