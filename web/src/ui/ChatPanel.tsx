import type { SessionView } from "../api/types.js";
import type { ChatAsk, ChatSession } from "../chat/chat-session.js";
import { useObservable } from "../live/observable.js";
import { locationName, shortId } from "../util/format.js";
import { AgentControls } from "./AgentControls.js";
import { Elapsed } from "./Countdown.js";
import { EditableTitle } from "./EditableTitle.js";
import { PromptBox } from "./PromptBox.js";
import { QuestionBody } from "./QuestionBody.js";
import { words } from "./plain-words.js";
import { SessionStateBadge } from "./StateBadge.js";
import { TranscriptView } from "./TranscriptView.js";

const phaseText = {
  connecting: "Connecting to Berth…",
  opening: "Opening the session…",
  ready: null,
  prompting: null,
  closed: "Closed.",
} as const;

/** One open session: its transcript (replayed, then live), its questions, a prompt box and controls. */
export function ChatPanel({
  chat,
  session,
  onClose,
  onDelete,
  onRename,
  onReconnect,
}: {
  chat: ChatSession;
  session: SessionView | undefined;
  onClose: () => void;
  onDelete: (session: SessionView) => void;
  onRename: (sessionId: string, title: string | null) => Promise<void>;
  onReconnect: () => void;
}) {
  const { phase, transcript, asks, sessionId } = useObservable(chat.state);
  const turnRunning = phase.name === "prompting" || session?.turnActive === true;
  const title = session?.title ?? (sessionId ? `Untitled session ${shortId(sessionId)}` : "New session");
  const status = phase.name === "failed" ? null : phaseText[phase.name];
  return (
    <section class="chat panel" aria-labelledby="chat-title">
      <header class="chat-head">
        <div class="chat-title">
          {session ? (
            <EditableTitle title={session.title} shown={title} level={2} headingId="chat-title" onRename={(next) => onRename(session.id, next)}>
              {title}
            </EditableTitle>
          ) : (
            <h2 id="chat-title">{title}</h2>
          )}
          {session ? (
            <p class="meta">
              {session.agent} · <span class="path">{locationName(session.cwd, session.workspace)}</span> · <SessionStateBadge state={session.state} />{" "}
              ·{" "}
              <span class="term" title={words.holders.term}>
                open in {session.holders} {session.holders === 1 ? "client" : "clients"}
              </span>
              {session.turnActive && session.turnStartedAt !== null ? (
                <>
                  {" "}
                  · turn running <Elapsed since={session.turnStartedAt} />
                </>
              ) : null}
            </p>
          ) : null}
        </div>
        <div class="actions">
          <button type="button" onClick={() => chat.cancel()} disabled={!turnRunning}>
            Cancel turn
          </button>
          <button type="button" onClick={onClose} title="Release this page's hold; the session stays">
            Close
          </button>
          {session ? (
            <button type="button" class="danger quiet" onClick={() => onDelete(session)}>
              Delete
            </button>
          ) : null}
        </div>
        <AgentControls chat={chat} enabled={phase.name === "ready" || phase.name === "prompting"} />
      </header>
      {status ? (
        <p class="status" role="status">
          {status}
        </p>
      ) : null}
      {phase.name === "failed" ? (
        <div class="error-box" role="alert">
          <p>{phase.message}</p>
          {sessionId ? (
            <button type="button" onClick={onReconnect}>
              Reconnect
            </button>
          ) : null}
        </div>
      ) : null}
      <TranscriptView transcript={transcript} empty={phase.name === "ready" ? emptyText(session?.agent) : ""} />
      <div class="asks" aria-live="assertive">
        {asks.map((ask) => (
          <AskCard key={ask.id} ask={ask} chat={chat} />
        ))}
      </div>
      <PromptBox enabled={phase.name === "ready"} onSend={(text) => void chat.prompt(text)} />
    </section>
  );
}

function emptyText(agent: string | undefined): string {
  return agent === "demo"
    ? "No messages yet. The demo agent echoes what you write, and knows /ask, /elicit, /run <command> and /sleep <duration>."
    : "No messages yet.";
}

function AskCard({ ask, chat }: { ask: ChatAsk; chat: ChatSession }) {
  const headingId = `ask-${ask.id}`;
  return (
    <div class="card question ask" role="group" aria-labelledby={headingId}>
      <h3 id={headingId}>{ask.kind === "permission" ? "The agent asks for permission" : "The agent asks you to fill in a form"}</h3>
      <QuestionBody kind={ask.kind} request={ask.request} idPrefix={headingId} busy={false} onAnswer={(answer) => chat.answer(ask.id, answer)} />
    </div>
  );
}
