import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/rest.js";
import type { QuestionAnswer, QuestionView, SessionView } from "../api/types.js";
import type { ChatSession, NewSessionParams } from "../chat/chat-session.js";
import { useObservable } from "../live/observable.js";
import type { LiveOverview } from "../live/overview.js";
import type { DesktopNotifications } from "../notify/desktop-notifications.js";
import { PageAttention } from "../notify/page-attention.js";
import { shortId } from "../util/format.js";
import { AgentsPage } from "./AgentsPage.js";
import { AttentionStrip } from "./AttentionStrip.js";
import { forgetAnswering } from "./answering.js";
import { AuthRequired } from "./AuthRequired.js";
import { ChangesView } from "./ChangesView.js";
import { loadChat, useChatModule } from "./chat-loader.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { HomePane } from "./HomePane.js";
import { HostPage } from "./HostPage.js";
import { rememberConversation, rootTarget } from "./last-conversation.js";
import { LoginPanel } from "./LoginPanel.js";
import { LoginRoute } from "./LoginRoute.js";
import { inListOrder } from "./session-groups.js";
import { NewSessionDialog } from "./NewSessionDialog.js";
import { openAtQuestion, showInConversation } from "./question-focus.js";
import { RememberPrompt } from "./RememberPrompt.js";
import { AGENTS_HREF, currentRoute, navigate, redirect, SESSIONS_HREF, sessionHref, useRoute } from "./route.js";
import { type KeyPlace, neighbour, shortcutOf, type ShortcutAction } from "./shortcuts.js";
import { HelpDialog } from "./HelpDialog.js";
import { matchesFilter, noFilter, type SessionFilter } from "./session-filter.js";
import { SessionList } from "./SessionList.js";
import { SettingsDialog } from "./SettingsDialog.js";
import { TopBar } from "./TopBar.js";
import { useDialogs } from "./use-dialogs.js";

type Dialog =
  | { readonly name: "new-session" }
  | { readonly name: "settings" }
  | { readonly name: "help" }
  | { readonly name: "delete"; readonly session: SessionView }
  | { readonly name: "cancel-turn"; readonly chat: ChatSession; readonly title: string };

const FILTER_KEY = "berth.sessionFilter";

export function App({
  overview,
  notifications,
  offerRemember,
}: {
  overview: LiveOverview;
  notifications: DesktopNotifications;
  offerRemember: boolean;
}) {
  const state = useObservable(overview.state);
  const route = useRoute();
  const dialogs = useDialogs<Dialog>();
  const dialog = dialogs.shown;
  const [filter, setFilter] = useState<SessionFilter>(storedFilter);
  // The open connection: at most one, for the route's session (or for a new session about to be routed to).
  const [open, setOpen] = useState<ChatSession | null>(null);
  // The same, for effects that must not re-run when it changes.
  const openRef = useRef<ChatSession | null>(null);
  // The session j or k last opened: its chat leaves the focus on the page, so the next j or k steps on.
  const steppedTo = useRef<string | null>(null);
  // A session was started from the New session dialog: its chat's message box takes the focus once the dialog closed.
  const startedFromDialog = useRef(false);
  // A message for a session's agent from another view (the Changes view's "ask the agent"): sent once its chat is open.
  const sendOnOpen = useRef<{ readonly sessionId: string; readonly text: string } | null>(null);

  // Chats left with messages still to go: each stays (holding its session) until they went, then closes.
  const leftBehind = useRef(new Map<string, ChatSession>());

  /**
   * At most one chat is shown; showing another (or none) closes it, releasing the page's hold, unless messages typed
   * there are still to go out: then it stays behind until they did.
   */
  const show = (next: ChatSession | null): void => {
    const shown = openRef.current;
    if (shown && shown !== next) leave(shown);
    openRef.current = next;
    setOpen(next);
  };
  const leave = (chat: ChatSession): void => {
    const sessionId = chat.sessionId;
    if (sessionId === null || !chat.hasMessagesToGo()) return void chat.close();
    chat.leftBehind();
    leftBehind.current.set(sessionId, chat);
    // Once its messages went, or it failed (its messages go back into the draft), it closes.
    const stop = chat.state.subscribe(() => {
      if (leftBehind.current.get(sessionId) !== chat) return stop();
      if (chat.hasMessagesToGo()) return;
      stop();
      leftBehind.current.delete(sessionId);
      void chat.close();
    });
  };
  /** The chat for a session: the one left behind with its messages (unless it failed meanwhile), else a new one. */
  const chatFor = (sessionId: string, open: (sessionId: string) => ChatSession): ChatSession => {
    const kept = leftBehind.current.get(sessionId);
    leftBehind.current.delete(sessionId);
    if (kept && !kept.failed) return kept;
    void kept?.close();
    return open(sessionId);
  };

  // What is shown follows from the route during render: leaving a chat's address (or the
  // session being deleted) hides it in the same render, before any effect runs.
  const routed = route.name === "session" && !state.deleted.includes(route.sessionId) ? route.sessionId : null;
  const chat = routed !== null && open?.sessionId === routed ? open : null;
  const { module: chatModule, failed: chatUnloadable } = useChatModule(routed !== null);

  useEffect(() => overview.start(), [overview]);
  // After the dialog gave the focus back to what opened it (this effect runs after its close); the box's id is PromptBox's.
  useEffect(() => {
    if (dialog.name !== "none" || !startedFromDialog.current) return;
    startedFromDialog.current = false;
    document.getElementById("prompt-text")?.focus();
  }, [dialog]);
  useEffect(() => new PageAttention(overview, notifications).start(), [overview, notifications]);
  useEffect(
    () => () => {
      void openRef.current?.close();
      for (const chat of leftBehind.current.values()) void chat.close();
    },
    [],
  );
  // What was kept of answers to questions that are waiting no more goes (answering.ts).
  const waitingBefore = useRef<ReadonlySet<string>>(new Set());
  useEffect(() => {
    const waiting = new Set(state.questions.map((question) => question.id));
    forgetAnswering([...waitingBefore.current].filter((id) => !waiting.has(id)));
    waitingBefore.current = waiting;
  }, [state.questions]);
  // Chats left behind follow their sessions too (a turn's end lets their next message go); a deleted one's closes.
  const observedBehind = useRef(new WeakMap<ChatSession, SessionView | undefined>());
  useEffect(() => {
    for (const [sessionId, chat] of leftBehind.current) {
      if (!state.deleted.includes(sessionId)) {
        const session = state.sessions.find((each) => each.id === sessionId);
        if (observedBehind.current.get(chat) === session) continue;
        observedBehind.current.set(chat, session);
        chat.observe(session);
      } else {
        leftBehind.current.delete(sessionId);
        void chat.close();
      }
    }
  }, [state.sessions, state.deleted]);
  useEffect(() => overview.onAgentState((sessionId) => openRef.current?.agentStateChanged(sessionId)), [overview]);
  useEffect(() => {
    if ((route.name === "session" || route.name === "changes") && state.deleted.includes(route.sessionId)) navigate(SESSIONS_HREF);
  }, [route, state.deleted]);
  // The sessions are known once the first read of them is in (the agents come with them).
  const loaded = state.agents !== null;
  // The address, not `route`: a click may have left the root before this render caught up, and must not be undone.
  useEffect(() => {
    if (route.name === "root" && loaded && currentRoute().name === "root") redirect(rootTarget(state.sessions));
  }, [route, loaded, state.sessions]);
  useEffect(() => {
    if (routed !== null && state.sessions.some((session) => session.id === routed)) rememberConversation(routed);
  }, [routed, state.sessions]);
  // Before the frame is painted: a session's address never shows a frame of the list alone first.
  useLayoutEffect(() => {
    if (routed === null) show(null);
    else if (chatModule && openRef.current?.sessionId !== routed)
      show(chatFor(routed, (sessionId) => chatModule.ChatSession.open({ mode: "load", sessionId })));
  }, [routed, chatModule]);

  useEffect(() => {
    if (chat === null || sendOnOpen.current?.sessionId !== chat.sessionId) return;
    chat.send(sendOnOpen.current.text);
    sendOnOpen.current = null;
  }, [chat]);

  const chatSession = chat?.sessionId ? state.sessions.find((s) => s.id === chat.sessionId) : undefined;
  const shownSessions = state.sessions.filter((session) => matchesFilter(session, filter));
  const chooseFilter = (next: SessionFilter): void => {
    setFilter(next);
    window.sessionStorage.setItem(FILTER_KEY, JSON.stringify(next));
  };

  // Read by the one key listener, which is not re-added on every render.
  const act = useRef<(action: ShortcutAction) => boolean>(() => false);
  act.current = (action) => {
    switch (action) {
      case "help":
        dialogs.open({ name: "help" });
        return true;
      case "new-session":
        dialogs.open({ name: "new-session" });
        return true;
      case "search": {
        const search = document.getElementById("session-search");
        if (!search || !isShown(search)) return false;
        search.focus();
        return true;
      }
      case "next-session":
      case "previous-session": {
        const here = currentRoute();
        const next = neighbour(
          inListOrder(shownSessions).map((session) => session.id),
          // The address, not the chat nor the last render: a key right after the last one moves on from where it went.
          here.name === "session" ? here.sessionId : null,
          action === "next-session" ? 1 : -1,
        );
        if (next === undefined) return false;
        steppedTo.current = next;
        navigate(sessionHref(next));
        return true;
      }
      case "question":
        return jumpToQuestion(state.questions[0], chat && chatModule ? chat.sessionId : null);
      case "cancel-turn": {
        // Escape is pressed for many things: it asks first.
        if (chat === null || !chat.canCancel()) return false;
        dialogs.open({ name: "cancel-turn", chat, title: chatSession?.title ?? `Untitled session ${shortId(chat.sessionId ?? "")}` });
        return true;
      }
    }
  };
  useEffect(() => {
    const onKey = (event: KeyboardEvent): void => {
      // An open dialog has the keys (Escape closes it).
      if (event.defaultPrevented || document.querySelector("dialog[open]")) return;
      // Escape while composing (an input method's text) gives up the composition, nothing more.
      const action = event.isComposing ? undefined : shortcutOf(event, keyPlace(event.target));
      if (action && act.current(action)) event.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  if (state.link.name === "unauthorized") return <AuthRequired />;

  /** From the New session dialog `from`: the new session's chat opens, unless that dialog was closed meanwhile. */
  const startSession = async (params: NewSessionParams, from: typeof dialog): Promise<void> => {
    const { ChatSession } = await loadChat();
    const next = ChatSession.open({ mode: "new", ...params });
    try {
      const sessionId = await next.opened;
      // Closed while it started (the browser let a second Escape through): the session is in the list; the page
      // stays where the person went.
      if (!dialogs.stillShown(from)) {
        void next.close();
        return;
      }
      startedFromDialog.current = true;
      show(next);
      navigate(sessionHref(sessionId));
    } catch (error) {
      void next.close();
      throw error;
    }
  };

  const renameSession = async (sessionId: string, title: string | null): Promise<void> => {
    overview.sessionChanged(await guarded(() => api.renameSession(sessionId, title)));
  };

  const deleteSession = async (session: SessionView): Promise<void> => {
    await guarded(() => api.deleteSession(session.id));
    overview.sessionDeleted(session.id);
  };

  /** Sends through the conversation's message box, as if typed there: its chat opens with the message going out. */
  const askAgent = async (sessionId: string, text: string): Promise<void> => {
    sendOnOpen.current = { sessionId, text };
    navigate(sessionHref(sessionId));
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

  return (
    <>
      <TopBar
        link={state.link}
        onNewSession={() => dialogs.open({ name: "new-session" })}
        onSettings={() => dialogs.open({ name: "settings" })}
        onHelp={() => dialogs.open({ name: "help" })}
      >
        {/* Where the Questions panel is on screen, it lists them; elsewhere the strip points to the first. */}
        {route.name === "sessions" || route.name === "host" ? null : (
          <AttentionStrip questions={state.questions} sessions={state.sessions} openSessionId={chat && chatModule ? chat.sessionId : null} />
        )}
      </TopBar>
      {offerRemember ? <RememberPrompt /> : null}
      {route.name === "changes" ? (
        <main class="layout">
          <ChangesView
            key={route.sessionId}
            sessionId={route.sessionId}
            path={route.path}
            session={state.sessions.find((s) => s.id === route.sessionId)}
            onLand={async (message) => overview.sessionChanged(await guarded(() => api.land(route.sessionId, message)))}
            onDiscard={async () => overview.sessionChanged(await guarded(() => api.discard(route.sessionId)))}
            onAskAgent={(text) => askAgent(route.sessionId, text)}
          />
        </main>
      ) : route.name === "agents" ? (
        <main class="layout">
          <AgentsPage onAgentsChanged={() => overview.agentsChanged()} />
        </main>
      ) : route.name === "host" ? (
        <main class="layout">
          <HostPage
            sessions={state.sessions}
            locations={state.locations}
            questions={state.questions}
            records={state.records}
            onAnswer={answerQuestion}
          />
        </main>
      ) : (
        <main class={(chat && chatModule) || route.name === "terminal-login" ? "layout chat-first with-chat" : "layout chat-first"}>
          <SessionList
            sessions={state.sessions}
            shown={shownSessions}
            filter={filter}
            onFilter={chooseFilter}
            openSessionId={chat?.sessionId ?? null}
          />
          <div class="pane">
            {chatUnloadable ? (
              // A page older than the running Berth asks for code that is no longer there: only a reload helps then.
              <div class="error-box chat-unloadable" role="alert">
                <p>The chat could not be loaded: Berth is out of reach, or it was upgraded since this page was opened. Trying again…</p>
                <button type="button" onClick={() => window.location.reload()}>
                  Reload the page
                </button>
              </div>
            ) : null}
            {chat && chatModule ? (
              <chatModule.ChatPanel
                key={chat.sessionId ?? "new"}
                chat={chat}
                session={chatSession}
                overviewLink={state.link}
                focusPrompt={steppedTo.current !== chat.sessionId}
                onClose={() => navigate(SESSIONS_HREF)}
                onDelete={(session) => dialogs.open({ name: "delete", session })}
                onRename={renameSession}
                onReconnect={() => chat.sessionId && show(chatModule.ChatSession.open({ mode: "load", sessionId: chat.sessionId }))}
              />
            ) : route.name === "terminal-login" ? (
              <LoginPanel
                key={`${route.agentId}/${route.methodId}`}
                agentId={route.agentId}
                methodId={route.methodId}
                onClose={() => navigate(AGENTS_HREF)}
              />
            ) : routed === null ? (
              <HomePane
                loaded={loaded}
                sessions={state.sessions}
                questions={state.questions}
                onNewSession={() => dialogs.open({ name: "new-session" })}
                onAnswer={answerQuestion}
              />
            ) : null}
          </div>
        </main>
      )}
      {dialog.name === "new-session" ? (
        <NewSessionDialog agents={state.agents} onStart={(params) => startSession(params, dialog)} onClose={() => dialogs.close(dialog)} />
      ) : null}
      {route.name === "agent-login" ? <LoginRoute agentId={route.agentId} methodId={route.methodId} onClose={() => navigate(AGENTS_HREF)} /> : null}
      {dialog.name === "help" ? <HelpDialog onClose={() => dialogs.close(dialog)} /> : null}
      {dialog.name === "settings" ? <SettingsDialog notifications={notifications} onClose={() => dialogs.close(dialog)} /> : null}
      {dialog.name === "delete" ? (
        <ConfirmDialog
          title="Delete this session?"
          body={`“${dialog.session.title ?? `Untitled session ${shortId(dialog.session.id)}`}” will be closed: its turn is interrupted, its agent stopped and its history removed. This cannot be undone.`}
          confirmLabel="Delete session"
          workingLabel="Deleting…"
          onConfirm={() => deleteSession(dialog.session)}
          onClose={() => dialogs.close(dialog)}
        />
      ) : null}
      {dialog.name === "cancel-turn" ? (
        <ConfirmDialog
          title="Cancel the running turn?"
          body={`The agent in “${dialog.title}” is told to stop what it is doing. What it did so far stays in the conversation.`}
          confirmLabel="Cancel turn"
          workingLabel="Cancelling…"
          onConfirm={async () => dialog.chat.cancel()}
          onClose={() => dialogs.close(dialog)}
        />
      ) : null}
    </>
  );
}

function storedFilter(): SessionFilter {
  try {
    return { ...noFilter, ...(JSON.parse(window.sessionStorage.getItem(FILTER_KEY) ?? "{}") as Partial<SessionFilter>) };
  } catch {
    return noFilter;
  }
}

function keyPlace(target: EventTarget | null): KeyPlace {
  if (target instanceof HTMLInputElement && target.type === "search") return "search";
  // The message box's id is PromptBox's.
  if (target instanceof HTMLTextAreaElement && target.id === "prompt-text") return "prompt";
  const typing = target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  return typing ? "field" : "page";
}

/** Whether an element is laid out (a phone hides the list while a chat is open). */
function isShown(element: HTMLElement): boolean {
  return element.getClientRects().length > 0;
}

/**
 * Focuses the question where it is answered: in the open chat's conversation when it is that session's,
 * else its card in the Questions panel when that is on screen; otherwise (another session's chat open)
 * opens its session, whose chat asks it.
 */
function jumpToQuestion(question: QuestionView | undefined, openSessionId: string | null): boolean {
  if (!question) return false;
  if (question.sessionId === openSessionId) {
    showInConversation(question.id);
    return true;
  }
  const card = document.querySelector<HTMLElement>(`.card[data-question-id="${CSS.escape(question.id)}"]`);
  if (card && isShown(card)) {
    card.scrollIntoView({ block: "center" });
    card.focus();
    return true;
  }
  openAtQuestion(question.sessionId, question.id);
  return true;
}
