import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/rest.js";
import type { QuestionAnswer, SessionView } from "../api/types.js";
import { ChatSession } from "../chat/chat-session.js";
import { useObservable } from "../live/observable.js";
import type { LiveOverview } from "../live/overview.js";
import type { DesktopNotifications } from "../notify/desktop-notifications.js";
import { PageAttention } from "../notify/page-attention.js";
import { shortId } from "../util/format.js";
import { AuthRequired } from "./AuthRequired.js";
import { ChatPanel } from "./ChatPanel.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { FeedPanel } from "./FeedPanel.js";
import { LocationsPanel } from "./LocationsPanel.js";
import { NewSessionDialog, type NewSessionParams } from "./NewSessionDialog.js";
import { QuestionsPanel } from "./QuestionsPanel.js";
import { navigate, sessionHref, useRoute } from "./route.js";
import { SessionsPanel } from "./SessionsPanel.js";
import { SettingsDialog } from "./SettingsDialog.js";
import { TopBar } from "./TopBar.js";

type Dialog =
  | { readonly name: "none" }
  | { readonly name: "new-session" }
  | { readonly name: "settings" }
  | { readonly name: "delete"; readonly session: SessionView };

const OVERVIEW = "#/";

export function App({ overview, notifications }: { overview: LiveOverview; notifications: DesktopNotifications }) {
  const state = useObservable(overview.state);
  const route = useRoute();
  const [dialog, setDialog] = useState<Dialog>({ name: "none" });
  // The open connection: at most one, for the route's session (or for a new session about to be routed to).
  const [open, setOpen] = useState<ChatSession | null>(null);
  // The same, for effects that must not re-run when it changes.
  const openRef = useRef<ChatSession | null>(null);

  /** At most one chat is open; opening another (or none) closes it, releasing the page's hold. */
  const show = (next: ChatSession | null): void => {
    if (openRef.current !== next) void openRef.current?.close();
    openRef.current = next;
    setOpen(next);
  };

  // What is shown follows from the route during render: leaving a chat's address (or the
  // session being deleted) hides it in the same render, before any effect runs.
  const routed = route.name === "session" && !state.deleted.includes(route.sessionId) ? route.sessionId : null;
  const chat = routed !== null && open?.sessionId === routed ? open : null;

  useEffect(() => overview.start(), [overview]);
  useEffect(() => new PageAttention(overview, notifications).start(), [overview, notifications]);
  useEffect(() => () => void openRef.current?.close(), []);
  useEffect(() => {
    if (route.name === "session" && state.deleted.includes(route.sessionId)) navigate(OVERVIEW);
  }, [route, state.deleted]);
  useEffect(() => {
    if (routed === null) show(null);
    else if (openRef.current?.sessionId !== routed) show(ChatSession.open({ mode: "load", sessionId: routed }));
  }, [routed]);

  if (state.link.name === "unauthorized") return <AuthRequired />;

  const startSession = async (params: NewSessionParams): Promise<void> => {
    const next = ChatSession.open({ mode: "new", ...params });
    try {
      const sessionId = await next.opened;
      show(next);
      navigate(sessionHref(sessionId));
    } catch (error) {
      void next.close();
      throw error;
    }
  };

  const deleteSession = async (session: SessionView): Promise<void> => {
    await guarded(() => api.deleteSession(session.id));
    overview.sessionDeleted(session.id);
  };

  const answerQuestion = async (questionId: string, answer: QuestionAnswer): Promise<void> => {
    try {
      await guarded(() => api.answerQuestion(questionId, answer));
    } catch (error) {
      // Answered or withdrawn elsewhere first: nothing is waiting any more.
      if (!(error instanceof ApiError && (error.status === 409 || error.status === 404))) throw error;
    }
    overview.questionResolved(questionId);
  };

  /** A refused token anywhere turns the whole page into the "open the link" page. */
  const guarded = async <T,>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) overview.unauthorized();
      throw error;
    }
  };

  const chatSession = chat?.sessionId ? state.sessions.find((s) => s.id === chat.sessionId) : undefined;
  return (
    <>
      <TopBar link={state.link} onNewSession={() => setDialog({ name: "new-session" })} onSettings={() => setDialog({ name: "settings" })} />
      <main class={chat ? "layout with-chat" : "layout"}>
        <div class="overview">
          <div class="column">
            <QuestionsPanel questions={state.questions} sessions={state.sessions} onAnswer={answerQuestion} />
            <SessionsPanel
              sessions={state.sessions}
              records={state.records}
              openSessionId={chat?.sessionId ?? null}
              onDelete={(session) => setDialog({ name: "delete", session })}
            />
          </div>
          <div class="column">
            <LocationsPanel locations={state.locations} records={state.records} />
            <FeedPanel records={state.records} sessions={state.sessions} />
          </div>
        </div>
        {chat ? (
          <ChatPanel
            key={chat.sessionId ?? "new"}
            chat={chat}
            session={chatSession}
            onClose={() => navigate(OVERVIEW)}
            onDelete={(session) => setDialog({ name: "delete", session })}
            onReconnect={() => chat.sessionId && show(ChatSession.open({ mode: "load", sessionId: chat.sessionId }))}
          />
        ) : null}
      </main>
      {dialog.name === "new-session" ? (
        <NewSessionDialog agents={state.agents} onStart={startSession} onClose={() => setDialog({ name: "none" })} />
      ) : null}
      {dialog.name === "settings" ? <SettingsDialog notifications={notifications} onClose={() => setDialog({ name: "none" })} /> : null}
      {dialog.name === "delete" ? (
        <ConfirmDialog
          title="Delete this session?"
          body={`“${dialog.session.title ?? `Untitled session ${shortId(dialog.session.id)}`}” will be closed: its turn is interrupted, its agent stopped and its history removed. This cannot be undone.`}
          confirmLabel="Delete session"
          onConfirm={() => deleteSession(dialog.session)}
          onClose={() => setDialog({ name: "none" })}
        />
      ) : null}
    </>
  );
}
