import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import type { SessionView } from "../api/types.js";
import type { ChatLink, ChatSession } from "../chat/chat-session.js";
import { useObservable } from "../live/observable.js";
import type { LinkState } from "../live/overview.js";
import { lostSince } from "../live/reconnection.js";
import { formatClock, formatDuration, locationName, shortId } from "../util/format.js";
import { AgentControls } from "./AgentControls.js";
import { ChangesLink } from "./ChangesLink.js";
import { Countdown, Elapsed } from "./Countdown.js";
import { EditableTitle } from "./EditableTitle.js";
import { Outbox } from "./Outbox.js";
import { PromptBox } from "./PromptBox.js";
import type { AnswerQuestion } from "./answering.js";
import { words } from "./plain-words.js";
import { SESSIONS_HREF } from "./route.js";
import { ActivityChip, SessionStateBadge } from "./StateBadge.js";
import { TranscriptView } from "./TranscriptView.js";
/** One open session: its transcript (replayed, then live), its questions, a prompt box and controls. */
export function ChatPanel({
  chat,
  session,
  overviewLink,
  focusPrompt,
  onClose,
  onDelete,
  onRename,
  onReconnect,
}: {
  chat: ChatSession;
  session: SessionView | undefined;
  /** The page's event stream (the list's), which keeps `session` current. */
  overviewLink: LinkState;
  /** The message box takes the focus as the chat opens (not while the person steps through sessions with j and k). */
  focusPrompt: boolean;
  onClose: () => void;
  onDelete: (session: SessionView) => void;
  onRename: (sessionId: string, title: string | null) => Promise<void>;
  onReconnect: () => void;
}) {
  const { link, sessionId, loading, outbox, turnRunning, reconnection } = useObservable(chat.state);
  const answer = useCallback<AnswerQuestion>((questionId, value) => chat.answer(questionId, value), [chat]);
  const commands = useObservable(chat.commands);
  // While Berth is out of reach, the header shows the session as it was last known, not as it is.
  const chatLostAt = lostSince(reconnection);
  const asOf = earliest(chatLostAt, overviewLink.name === "reconnecting" ? overviewLink.since : null);
  // A phone shows the header's details (the meta line, the agent's controls) on request; a wide screen always.
  const [details, setDetails] = useState<"collapsed" | "expanded">("collapsed");
  const title = session?.title ?? (sessionId ? `Untitled session ${shortId(sessionId)}` : "New session");
  // One array while the paths stay the same: each refresh of the session view would otherwise render every row again.
  const writableKey = session?.sandbox ? JSON.stringify(session.sandbox.writable) : null;
  const writable = useMemo<readonly string[] | null>(() => (writableKey === null ? null : (JSON.parse(writableKey) as string[])), [writableKey]);
  // The event stream tells of turns and answers elsewhere: the transcript reads what they added.
  useEffect(() => chat.observe(session), [chat, session?.turnActive, session?.updatedAt, session?.pendingQuestions]);
  return (
    <section class="chat sheet panel" aria-labelledby="chat-title">
      <header class={`chat-head sheet-head details-${details}`}>
        <div class="chat-title">
          {/* A phone shows the list or a conversation: this leads back to the list. */}
          <a class="back-link" href={SESSIONS_HREF} title="Back to the sessions">
            <span aria-hidden="true">‹</span>
            <span class="visually-hidden">Back to the sessions</span>
          </a>
          {session ? (
            <EditableTitle title={session.title} shown={title} level={2} headingId="chat-title" onRename={(next) => onRename(session.id, next)}>
              {title}
            </EditableTitle>
          ) : (
            <h2 id="chat-title">{title}</h2>
          )}
          {session ? <ActivityChip session={session} /> : null}
          {session ? (
            <p id="chat-details" class={asOf === null ? "meta" : "meta stale"}>
              {session.agent} · <span class="path">{locationName(session.cwd, session.workspace)}</span> · <SessionStateBadge state={session.state} />{" "}
              {session.sandbox ? <SandboxChip sandbox={session.sandbox} /> : null}· <span class="pid">pid {session.pid ?? "—"}</span> ·{" "}
              <span class="term" title={words.holders.term}>
                open in {session.holders} {session.holders === 1 ? "client" : "clients"}
              </span>
              {session.releaseAt !== null && session.holders === 0 ? (
                <>
                  {" "}
                  ·{" "}
                  <span class="term" title={words.release.term}>
                    the agent process stops <Countdown at={session.releaseAt} expired="any moment" />
                  </span>
                </>
              ) : null}
              {session.turnActive && session.turnStartedAt !== null ? (
                <>
                  {" "}
                  · turn running{" "}
                  {asOf === null ? <Elapsed since={session.turnStartedAt} /> : formatDuration(Math.max(0, asOf - session.turnStartedAt))}
                </>
              ) : null}
              {asOf === null ? null : (
                <>
                  {" "}
                  · <span class="as-of">last known, as of {formatClock(asOf)}</span>
                </>
              )}
            </p>
          ) : null}
        </div>
        <div class="actions">
          {sessionId ? <ChangesLink sessionId={sessionId} session={session} /> : null}
          <button
            type="button"
            class="details-toggle"
            aria-expanded={details === "expanded"}
            aria-controls="chat-details chat-controls"
            onClick={() => setDetails(details === "expanded" ? "collapsed" : "expanded")}
          >
            Details
          </button>
          <button
            type="button"
            onClick={() => chat.cancel()}
            disabled={!chat.canCancel()}
            title={chatLostAt === null ? undefined : "Berth cannot be reached: the turn cannot be cancelled from here until it is"}
          >
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
        {/* Shown while the session is only read, from what the host keeps; a change holds the session first. */}
        <div id="chat-controls" class="chat-controls">
          <AgentControls chat={chat} enabled={link.name === "live" || link.name === "reading"} />
        </div>
      </header>
      <LinkStatus link={link} loading={loading} chat={chat} canReconnect={sessionId !== null} onReconnect={onReconnect} />
      <TranscriptView
        transcript={chat.transcript}
        empty={loading ? "" : emptyText(session?.agent)}
        sent={outbox.length}
        onAnswer={answer}
        writable={writable}
      />
      <Outbox outbox={outbox} turnRunning={turnRunning} chat={chat} />
      <PromptBox
        key={chat.instance}
        sessionId={sessionId}
        enabled={link.name !== "failed" && link.name !== "closed"}
        commands={commands}
        focusOnOpen={focusPrompt}
        onSend={(text) => chat.send(text)}
      />
    </section>
  );
}

/** "Sandboxed", with what the agent may write and cannot see in its title (docs/sandbox.md). */
function SandboxChip({ sandbox }: { sandbox: NonNullable<SessionView["sandbox"]> }) {
  const details = `Writes only in: ${sandbox.writable.join(", ")}. Hidden: ${sandbox.hidden.join(", ")}.`;
  return (
    <>
      ·{" "}
      <span class="badge info" title={details}>
        Sandboxed{sandbox.network === "off" ? ", no network" : ""}
      </span>{" "}
    </>
  );
}

function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

function emptyText(agent: string | undefined): string {
  return agent === "demo"
    ? "No messages yet. The demo agent echoes what you write, and knows /ask, /elicit, /run <command> and /sleep <duration>."
    : "No messages yet.";
}

/** Where the page stands with Berth, in a line: reading only, connecting, lost and retrying, or failed. */
function LinkStatus({
  link,
  loading,
  chat,
  canReconnect,
  onReconnect,
}: {
  link: ChatLink;
  loading: boolean;
  chat: ChatSession;
  canReconnect: boolean;
  onReconnect: () => void;
}) {
  if (link.name === "failed") {
    return (
      <div class="error-box" role="alert">
        <p>{link.message}</p>
        {canReconnect ? (
          <button type="button" onClick={onReconnect}>
            Reconnect
          </button>
        ) : null}
      </div>
    );
  }
  if (link.name === "reconnecting") {
    return (
      <div class="link-status lost" role="status">
        <p>
          Berth cannot be reached ({link.reason}). Trying again <Countdown at={link.retryAt} />, attempt {link.attempt}. Messages you send wait until
          then.
        </p>
        <button type="button" onClick={() => chat.retryNow()}>
          Retry now
        </button>
      </div>
    );
  }
  if (loading) {
    return (
      <p class="status" role="status">
        Reading the conversation…
      </p>
    );
  }
  if (link.name === "connecting") {
    return (
      <p class="status" role="status">
        Connecting to Berth…
      </p>
    );
  }
  if (link.name === "reading") {
    return (
      <div class="link-status reading" role="status">
        <p>Read only: a message, or Resume, starts the agent if needed.</p>
        <button type="button" onClick={() => chat.resume()}>
          Resume
        </button>
      </div>
    );
  }
  return null;
}
