import type { Question } from "../store/questions.js";
import type { Store } from "../store/store.js";
import { callOp } from "../store/write-batch.js";
import { NOTICE_META } from "../protocol/meta-keys.js";
import type { Journal } from "./journal.js";
import { locationOf } from "./session-location.js";

/** What took the agent process away: this host stopped abruptly (and restarted), or another host went offline and this one adopted its session. */
export type AbandonedBy = "restart" | "adoption";

const REASONS: Readonly<Record<AbandonedBy, string>> = {
  restart: "the agent process that asked is gone (host restarted)",
  adoption: "the agent process that asked is gone (its host went offline; the session was adopted by another host)",
};

const CAUSES: Readonly<Record<AbandonedBy, string>> = {
  restart: "Berth was stopped abruptly, and the agent process that asked is gone",
  adoption: "the host that ran its agent went offline and another host adopted the session, so the agent process that asked is gone",
};

/**
 * What a client sees of what a dead agent process left unfinished, the next time the session is loaded: each pending
 * question resolved `orphaned` (its new state stored with its `question_resolved` event), the turn it was in ended (it
 * cannot go on: its agent process is gone), and a notice in the transcript whose `_meta["berth/notice"].rerun` carries
 * that turn's prompt, so a client can offer to send it again. After a restart only sessions with questions get here;
 * an adopted session always does, so a turn its dead host left open is ended too.
 */
export function journalAbandoned(
  store: Store,
  journal: Journal,
  sessionId: string,
  questions: readonly Question[],
  at: number,
  by: AbandonedBy,
): void {
  const session = store.sessions.get(sessionId);
  if (!session) return;
  const key = locationOf(session);
  let openPrompt: unknown;
  for (const event of store.events.replay(sessionId)) {
    if (event.kind === "turn_started") openPrompt = (event.payload as { prompt?: unknown }).prompt;
    else if (event.kind === "turn_ended") openPrompt = undefined;
  }
  if (questions.length === 0 && openPrompt === undefined) return;
  const reason = REASONS[by];
  for (const question of questions) {
    journal.append(
      sessionId,
      key,
      "question_resolved",
      { questionId: question.id, state: "orphaned", reason },
      { with: [callOp("questions.resolve", [question.id, "orphaned", reason, at])] },
    );
  }
  if (openPrompt !== undefined) journal.append(sessionId, key, "turn_ended", { stopReason: null, error: "the host stopped during the turn" });
  const again = openPrompt === undefined ? "" : " Send your last prompt again to re-run the turn.";
  const text =
    questions.length > 0
      ? `The agent stopped before you answered (${questions.map(describeQuestion).join("; ")}): ${CAUSES[by]}, so an answer can no longer reach it.${again}`
      : `The agent stopped during this turn: ${CAUSES[by]}.${again}`;
  const notice = {
    kind: questions.length > 0 ? "question_orphaned" : "turn_abandoned",
    questionIds: questions.map((question) => question.id),
    ...(openPrompt === undefined ? {} : { rerun: { prompt: openPrompt } }),
  };
  const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n${text}\n` }, _meta: { [NOTICE_META]: notice } };
  journal.append(sessionId, key, "update", { update });
}

function describeQuestion(question: Question): string {
  const request = (question.request ?? {}) as { toolCall?: { title?: unknown }; message?: unknown };
  const title = question.kind === "permission" ? request.toolCall?.title : request.message;
  return typeof title === "string" && title.length > 0
    ? `"${title.length > 80 ? `${title.slice(0, 77)}...` : title}"`
    : `a ${question.kind} question`;
}
