import { hostname } from "node:os";
import type { WebhookConfig } from "../config/config-schema.js";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import type { QuestionView, SessionView, Timer } from "../host/views.js";
import { WebhookDelivery } from "./webhook-delivery.js";
import { webhookText } from "./webhook-text.js";

export interface WebhookNotifierOptions {
  readonly host: Host;
  readonly config: WebhookConfig;
  readonly log: Logger;
  /** The dashboard's address without a token (`http://192.168.1.20:7420`), for the link in each message. */
  readonly dashboardUrl: string;
  readonly retryDelaysMs?: readonly number[];
}

/** The JSON Berth POSTs; docs/serve.md ("Notifications") describes every field. */
export interface WebhookPayload {
  readonly event: "question_waiting" | "turn_ended";
  /**
   * One line for a person (Slack and Mattermost show `text` as the message); what agents and people
   * wrote in it is escaped for them ({@link webhookText}). The fields below carry it as written.
   */
  readonly text: string;
  readonly at: number;
  readonly host: string;
  readonly session: {
    readonly id: string;
    readonly title: string | null;
    readonly agent: string;
    readonly cwd: string;
    readonly workspace: string | null;
  };
  readonly question: {
    readonly id: string;
    readonly kind: string;
    readonly summary: string;
    readonly askedAt: number;
    readonly waitedMs: number;
  } | null;
  readonly turn: { readonly startedAt: number; readonly endedAt: number; readonly stopReason: string | null; readonly error: string | null } | null;
  /** The session on the dashboard; it carries no token. */
  readonly link: string;
}

const MINUTE_MS = 60_000;

/**
 * Tells a person, through the operator's webhook (`notify.webhook`), what waits for them: a
 * question still unanswered `afterMinutes` after it was asked, and the end of a turn that ran
 * at least that long. It watches the host's lifecycle records and never holds the host up.
 */
export class WebhookNotifier {
  private readonly delivery: WebhookDelivery;
  private readonly waiting = new Map<string, Timer>();
  private readonly turnStarts = new Map<string, number>();
  private readonly afterMs: number;
  private readonly stopWatching: () => void;

  constructor(private readonly options: WebhookNotifierOptions) {
    const { config, host, log } = options;
    const clock = host.clock;
    this.afterMs = config.afterMinutes * MINUTE_MS;
    this.delivery = new WebhookDelivery({
      target: { url: config.url, headers: config.headers },
      clock,
      log,
      ...(options.retryDelaysMs ? { retryDelaysMs: options.retryDelaysMs } : {}),
    });
    const wants = new Set(config.events);
    this.stopWatching = host.onRecord(({ record, at }) => {
      switch (record.kind) {
        case "question_asked":
          if (wants.has("question_waiting")) this.watchQuestion(record.questionId);
          return;
        case "question_answered":
        case "question_cancelled":
          return this.forgetQuestion(record.questionId);
        case "turn_started":
          if (wants.has("turn_ended")) this.turnStarts.set(record.sessionId, at);
          return;
        case "turn_ended":
          if (wants.has("turn_ended")) this.turnEnded(record.sessionId, at, record.stopReason, record.error);
          return;
      }
    });
    // Questions that waited through a restart are still waiting for someone.
    if (wants.has("question_waiting")) for (const question of host.pendingQuestions()) this.watchQuestion(question.id);
    log.info({ receiver: this.delivery.receiver, afterMinutes: config.afterMinutes, events: config.events }, "webhook notifications on");
  }

  close(): void {
    this.stopWatching();
    for (const timer of this.waiting.values()) timer.cancel();
    this.waiting.clear();
    this.delivery.close();
  }

  private watchQuestion(questionId: string): void {
    const question = this.options.host.question(questionId);
    if (!question || question.state !== "pending" || this.waiting.has(questionId)) return;
    // Due from when it was asked, not from when the notifier heard of it (records arrive once committed).
    const due = question.askedAt + this.afterMs - this.options.host.clock.now();
    if (due <= 0) return this.questionDue(questionId);
    this.waiting.set(
      questionId,
      this.options.host.clock.setTimeout(() => this.questionDue(questionId), due),
    );
  }

  private forgetQuestion(questionId: string): void {
    this.waiting.get(questionId)?.cancel();
    this.waiting.delete(questionId);
  }

  private questionDue(questionId: string): void {
    this.waiting.delete(questionId);
    const { host } = this.options;
    const clock = host.clock;
    const question = host.question(questionId);
    const session = question && host.getSession(question.sessionId);
    if (!question || question.state !== "pending" || !session) return;
    const waitedMs = clock.now() - question.askedAt;
    const summary = summaryOf(question);
    this.send(
      {
        event: "question_waiting",
        text: `Berth: ${nameOf(session)} has waited ${minutes(waitedMs)} for an answer: ${webhookText(summary)}`,
        question: { id: question.id, kind: question.kind, summary, askedAt: question.askedAt, waitedMs },
        turn: null,
      },
      session,
    );
  }

  private turnEnded(sessionId: string, endedAt: number, stopReason: string | null, error: string | null): void {
    const startedAt = this.turnStarts.get(sessionId);
    this.turnStarts.delete(sessionId);
    if (startedAt === undefined || endedAt - startedAt < this.afterMs) return;
    const session = this.options.host.getSession(sessionId);
    if (!session) return;
    const how =
      error !== null ? `failed: ${webhookText(error)}` : stopReason === "end_turn" ? "finished" : `ended (${webhookText(stopReason ?? "unknown")})`;
    this.send(
      {
        event: "turn_ended",
        text: `Berth: ${nameOf(session)} ${how} after ${minutes(endedAt - startedAt)}`,
        question: null,
        turn: { startedAt, endedAt, stopReason, error },
      },
      session,
    );
  }

  private send(message: Pick<WebhookPayload, "event" | "text" | "question" | "turn">, session: SessionView): void {
    const payload: WebhookPayload = {
      event: message.event,
      text: message.text,
      at: this.options.host.clock.now(),
      host: hostname(),
      session: { id: session.id, title: session.title, agent: session.agent, cwd: session.cwd, workspace: session.workspace },
      question: message.question,
      turn: message.turn,
      link: `${this.options.dashboardUrl.replace(/\/$/, "")}/#/sessions/${encodeURIComponent(session.id)}`,
    };
    this.delivery.send(payload, { event: message.event, sessionId: session.id });
  }
}

/** The session as `text` names it: its title and agent, escaped ({@link webhookText}). */
function nameOf(session: SessionView): string {
  const agent = webhookText(session.agent);
  return session.title === null ? `a ${agent} session` : `“${webhookText(session.title)}” (${agent})`;
}

/** What the question asks, in one short line. */
function summaryOf(question: QuestionView): string {
  const request = (question.request ?? {}) as { toolCall?: { title?: unknown }; message?: unknown };
  const text = question.kind === "permission" ? request.toolCall?.title : request.message;
  if (typeof text !== "string" || text.trim() === "") return question.kind === "permission" ? "a permission" : "a form";
  const line = text.trim().replace(/\s+/g, " ");
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function minutes(ms: number): string {
  if (ms < MINUTE_MS) return "less than a minute";
  const whole = Math.round(ms / MINUTE_MS);
  return whole === 1 ? "1 minute" : `${whole} minutes`;
}
