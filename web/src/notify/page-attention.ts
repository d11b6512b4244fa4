import type { QuestionView, SessionView, StampedRecord } from "../api/types.js";
import type { LiveOverview, OverviewState } from "../live/overview.js";
import { sessionHref } from "../ui/route.js";
import { type Attention, faviconHref, pageTitle } from "./attention.js";
import type { DesktopNotifications } from "./desktop-notifications.js";
import { questionSummary, sessionTitle } from "./question-words.js";

/**
 * Tells the person what needs them while they look elsewhere: the tab's title and favicon count
 * the questions waiting and the turns that ended while the page was hidden or unfocused, and a
 * browser notification (when allowed) says which session. Only what happens after the page's
 * first snapshot counts: history is not news.
 */
export class PageAttention {
  /** Records up to this id were known before; null until the first snapshot arrived. */
  private lastRecordId: number | null = null;
  private knownQuestions = new Set<string>();
  private turnsEnded = 0;
  private readonly stops: Array<() => void> = [];

  constructor(
    private readonly overview: LiveOverview,
    private readonly notifications: DesktopNotifications,
  ) {}

  start(): () => void {
    this.stops.push(this.overview.state.subscribe(() => this.changed(this.overview.state.value)));
    const back = (): void => {
      if (this.away()) return;
      this.turnsEnded = 0;
      this.show();
    };
    window.addEventListener("focus", back);
    document.addEventListener("visibilitychange", back);
    this.stops.push(() => window.removeEventListener("focus", back));
    this.stops.push(() => document.removeEventListener("visibilitychange", back));
    this.changed(this.overview.state.value);
    return () => {
      for (const stop of this.stops.splice(0)) stop();
    };
  }

  private changed(state: OverviewState): void {
    if (this.lastRecordId === null) {
      // The snapshot has landed once the agents are known.
      if (state.link.name !== "live" || state.agents === null) return this.show();
      this.lastRecordId = Math.max(0, ...state.records.map((stamped) => stamped.id));
      this.knownQuestions = new Set(state.questions.map((question) => question.id));
      return this.show();
    }
    const fresh = state.records.filter((stamped) => stamped.id > this.lastRecordId!);
    if (fresh.length > 0) this.lastRecordId = fresh[fresh.length - 1]!.id;
    for (const stamped of fresh) if (stamped.record.kind === "turn_ended") this.turnEnded(stamped, state.sessions);
    for (const question of state.questions) {
      if (this.knownQuestions.has(question.id)) continue;
      this.knownQuestions.add(question.id);
      this.questionAsked(question, state.sessions);
    }
    this.show();
  }

  private turnEnded(stamped: StampedRecord, sessions: readonly SessionView[]): void {
    if (stamped.record.kind !== "turn_ended" || !this.away()) return;
    const { sessionId, stopReason, error } = stamped.record;
    this.turnsEnded++;
    const how = error !== null ? `failed: ${error}` : stopReason === "end_turn" ? "finished" : `ended (${stopReason ?? "unknown"})`;
    this.notifications.show(
      `Turn ${how.startsWith("failed") ? "failed" : "ended"}: ${sessionTitle(sessionId, sessions)}`,
      `The turn ${how}.`,
      `turn-${sessionId}`,
      sessionHref(sessionId),
    );
  }

  private questionAsked(question: QuestionView, sessions: readonly SessionView[]): void {
    if (!this.away()) return;
    this.notifications.show(
      `Question waiting: ${sessionTitle(question.sessionId, sessions)}`,
      questionSummary(question),
      `question-${question.id}`,
      sessionHref(question.sessionId),
    );
  }

  private away(): boolean {
    return document.visibilityState !== "visible" || !document.hasFocus();
  }

  private show(): void {
    const attention: Attention = { questions: this.overview.state.value.questions.length, turnsEnded: this.turnsEnded };
    const title = pageTitle(attention);
    if (document.title !== title) document.title = title;
    const href = faviconHref(attention);
    const icon = document.querySelector<HTMLLinkElement>("link[rel='icon']");
    if (icon && icon.getAttribute("href") !== href) icon.setAttribute("href", href);
  }
}
