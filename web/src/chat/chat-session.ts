import { errorWords } from "../util/error-words.js";
import type { ClientConnection, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";
import { api, ApiError } from "../api/rest.js";
import type { QuestionAnswer, SessionView } from "../api/types.js";
import { Observable } from "../live/observable.js";
import { connected, type Reconnection } from "../live/reconnection.js";
import {
  nextToSend,
  reconciled,
  toFront,
  withEdited,
  withEditing,
  withQueued,
  withSendEnded,
  withState,
  without,
  type Outbox,
  type SendEnding,
} from "./outbox.js";
import { ConnectionSlot } from "./connection-slot.js";
import { keepUnsent } from "./drafts.js";
import { Reconnector, type ResumeTo } from "./reconnector.js";
import { yieldToPage } from "../util/yield-to-page.js";
import { JournalReader, journalPlace } from "./journal-reader.js";
import { AGENT_META, SANDBOX_META, TITLE_META, WORKSPACE_META, WORKTREE_META } from "../../../src/protocol/meta-keys.js";
import { commandsOf, type SlashCommand } from "./slash-commands.js";
import { TerminalFollower } from "./terminal-follower.js";
import { Transcript } from "./transcript.js";
import {
  controlsOfAnswer,
  controlsWithChange,
  controlsWithTurnUsage,
  controlsWithUpdate,
  noControls,
  requestOf,
  type AgentControls,
  type ControlChange,
} from "./agent-controls.js";

/**
 * How the page is linked to the session.
 *
 * - `reading`: the journal is read over REST; nothing is held and no agent starts (rule L9).
 * - `connecting`: an ACP connection is being opened to hold the session (to prompt, or resume).
 * - `live`: the session is held over ACP; prompts go out, updates stream in.
 * - `reconnecting`: Berth could not be reached; the next attempt is at `retryAt`, and the page
 *   goes back to `then` (`reading` or `live`) once it is.
 * - `failed`: the session cannot be opened (deleted, refused); `closed`: the page let go.
 */
export type ChatLink =
  | { readonly name: "reading" }
  | { readonly name: "connecting" }
  | { readonly name: "live" }
  | { readonly name: "reconnecting"; readonly then: ResumeTo; readonly attempt: number; readonly retryAt: number; readonly reason: string }
  | { readonly name: "failed"; readonly message: string }
  | { readonly name: "closed" };

export interface ChatState {
  readonly link: ChatLink;
  readonly sessionId: string | null;
  /** The journal is still being read. */
  readonly loading: boolean;
  /** Messages typed on this page that the transcript does not show yet. */
  readonly outbox: Outbox;
  /** A turn runs (this page's or another client's). */
  readonly turnRunning: boolean;
  /** Whether Berth was reached last time: the header shows the session as last known while it is not. */
  readonly reconnection: Reconnection;
}

/** What a new session starts with (the New session dialog's fields). */
export interface NewSessionParams {
  readonly agent: string;
  readonly cwd: string;
  readonly workspace: string | null;
  /** `workspace-write`: the session asks for a sandbox; `configured`: it takes the host's (docs/sandbox.md). */
  readonly sandbox: "configured" | "workspace-write";
  /** Names the session, and so the branch of its worktree. */
  readonly title: string | null;
  /** A git worktree of its own, from `cwd`'s repository (docs/worktrees.md); null: `cwd` itself. */
  readonly worktree: { readonly base?: string; readonly branch?: string } | null;
}

/** How the chat opens its session: an existing one (read from its journal), or a new one. */
export type ChatOpening = { readonly mode: "load"; readonly sessionId: string } | ({ readonly mode: "new" } & NewSessionParams);

let instances = 0;

/** How long closing waits for `session/close` to be answered before it closes the socket anyway. */
const CLOSE_ANSWER_MS = 2_000;

/** How often a session read without holding it is read again while another client runs a turn. */
const FOLLOW_MS = 1_000;

/**
 * One session on the page. Its transcript is the session's journal, read over REST (which holds
 * nothing) and followed live over ACP once the person prompts or resumes; each journal event is
 * applied once, in order, whichever way it came. A lost connection is retried with backoff, and a
 * message sent meanwhile waits in the outbox: nothing typed is dropped without saying so.
 */
export class ChatSession {
  /** Tells this chat from another of the same session (one opened again by Reconnect). */
  readonly instance = ++instances;
  readonly state: Observable<ChatState>;
  readonly transcript = new Transcript();
  /** The agent's mode, model, config options and usage for this session: the chat header's pickers. */
  readonly controls = new Observable<AgentControls>(noControls);
  /** The agent's commands, for the prompt's `/` menu: as Berth keeps them while the session is read, then the agent's updates. */
  readonly commands = new Observable<readonly SlashCommand[]>([]);
  /** The session's id once it is open; rejects with a message naming what went wrong. */
  readonly opened: Promise<string>;
  private readonly connection = new ConnectionSlot({ update: (notification) => this.updated(notification), asked: () => this.refresh() }, () => {
    if (this.closed()) return;
    const { link } = this.state.value;
    if (link.name === "live" || link.name === "connecting") this.lost("live", "The connection to Berth was lost.");
  });
  private readonly journal = new JournalReader(this.transcript, {
    readPage: (after, limit) => api.events(this.sessionId!, after, limit),
    yieldToPage,
    mayRefresh: () => !this.closed() && this.state.value.link.name !== "reconnecting",
    closed: () => this.closed(),
    usage: (update, seq) => this.followControls(update, seq),
    caughtUp: () => {
      if (this.state.value.loading) this.patch({ loading: false });
      this.reconcile();
    },
    failed: (error) => {
      if (isGone(error)) this.fail(errorWords(error));
      else this.lost(this.state.value.link.name === "live" ? "live" : "reading", errorWords(error));
    },
  });
  private followTimer: ReturnType<typeof setInterval> | undefined;
  private readonly terminals = new TerminalFollower(
    this.transcript,
    (terminalId) => api.terminal(this.sessionId!, terminalId),
    // Not while Berth is out of reach: reading starts again once the link is back.
    () => !["closed", "failed", "reconnecting"].includes(this.state.value.link.name),
  );
  private nextMessageId = 1;
  private prompting = false;
  /** Back after a lost link with a message tried before: the journal is being read before anything goes out. */
  private checkingOutbox = false;
  /** The journal seq of the usage report the controls show: an older one read after it is passed over. */
  private usageSeq = 0;
  /** Whether the host runs a turn in this session, as the overview last said. */
  private hostTurnActive: boolean | undefined;
  private readonly reconnector = new Reconnector((then, reconnection) => this.reconnect(then, reconnection));

  private constructor(opening: ChatOpening) {
    this.state = new Observable<ChatState>({
      link: opening.mode === "load" ? { name: "reading" } : { name: "connecting" },
      sessionId: opening.mode === "load" ? opening.sessionId : null,
      loading: opening.mode === "load",
      outbox: [],
      turnRunning: false,
      reconnection: connected,
    });
    this.transcript.subscribe(() => {
      this.showTurnRunning();
      this.terminals.update();
    });
    this.opened = opening.mode === "load" ? this.read(opening.sessionId) : this.create(opening);
    this.opened.catch(() => undefined);
  }

  static open(opening: ChatOpening): ChatSession {
    return new ChatSession(opening);
  }

  get sessionId(): string | null {
    return this.state.value.sessionId;
  }

  /** Sends a message: at once if nothing runs, else queued until the running turn ends. */
  send(text: string): void {
    if (this.closed() || text.trim() === "") return;
    this.patch({ outbox: withQueued(this.state.value.outbox, this.nextMessageId++, text, this.transcript.lastSeq) });
    this.pump();
  }

  /** Interrupts the running turn and sends this queued message as soon as it has stopped. */
  stopAndSend(messageId: number): void {
    this.patch({ outbox: toFront(this.state.value.outbox, messageId) });
    this.cancel();
  }

  /** Sends a message that failed again. */
  retry(messageId: number): void {
    this.patch({ outbox: withState(this.state.value.outbox, messageId, { state: "queued", error: null }) });
    this.pump();
  }

  /** Holds a queued message back while the person edits it; it keeps its place (nothing after it goes first). */
  edit(messageId: number): void {
    const outbox = withEditing(this.state.value.outbox, messageId);
    if (outbox !== this.state.value.outbox) this.patch({ outbox });
  }

  /** The edit is done: `text` goes out in the message's turn (empty removes it), or null keeps it as it was. */
  finishEdit(messageId: number, text: string | null): void {
    const outbox = withEdited(this.state.value.outbox, messageId, text);
    if (outbox === this.state.value.outbox) return;
    this.patch({ outbox });
    this.pump();
  }

  discard(messageId: number): void {
    this.patch({ outbox: without(this.state.value.outbox, messageId) });
  }

  /** Messages still to go out without the person (queued, held for an edit, or being sent), on a link that may send them. */
  hasMessagesToGo(): boolean {
    const { link, outbox } = this.state.value;
    if (link.name === "failed" || link.name === "closed") return false;
    return outbox.some((message) => message.state === "queued" || message.state === "editing" || message.state === "sending");
  }

  /** The session cannot be opened (deleted, refused): Reconnect, or a new chat, is the way on. */
  get failed(): boolean {
    return this.state.value.link.name === "failed";
  }

  /** The person left the conversation with messages still to go: one held for an edit goes as it was. */
  leftBehind(): void {
    for (const message of this.state.value.outbox) if (message.state === "editing") this.finishEdit(message.id, null);
  }

  /** Holds the session (starting its agent if it has none) without sending anything. */
  resume(): void {
    if (this.state.value.link.name === "reading") void this.goLive();
  }

  /** A turn runs and Berth is within reach to be told to stop it. */
  canCancel(): boolean {
    return this.turnRunning() && this.state.value.reconnection.name === "connected" && !this.closed();
  }

  /** Interrupts the running turn, whoever started it. */
  cancel(): void {
    // Holding the session to cancel is fine while a turn runs (its agent is up), and pointless otherwise.
    if (!this.turnRunning()) return;
    void this.whenLive().then((connection) => {
      const sessionId = this.sessionId;
      if (connection && sessionId) void connection.agent.notify("session/cancel", { sessionId });
    });
  }

  /** Answers one of the session's questions (over REST: it reaches the agent whoever holds the session). */
  async answer(questionId: string, answer: QuestionAnswer): Promise<void> {
    try {
      await api.answerQuestion(questionId, answer);
    } catch (error) {
      // Answered or withdrawn elsewhere first: the journal says how.
      if (!(error instanceof ApiError && (error.status === 409 || error.status === 404))) throw error;
    }
    this.refresh();
  }

  /** The session as the overview sees it: its turns ending elsewhere, and its progress while read. */
  observe(session: SessionView | undefined): void {
    if (!session || this.closed()) return;
    const follow = session.turnActive && this.state.value.link.name === "reading";
    if (follow && this.followTimer === undefined) this.followTimer = setInterval(() => this.refresh(), FOLLOW_MS);
    if (!follow && this.followTimer !== undefined) {
      clearInterval(this.followTimer);
      this.followTimer = undefined;
    }
    this.hostTurnActive = session.turnActive;
    // Shown at once: the journal's read that would show it may be failing (Berth's link lost, the overview's not).
    this.showTurnRunning();
    this.refresh();
  }

  /**
   * Another client (or the agent) changed the session's mode, model or options (`changed`: its id,
   * or null for any session): a page only reading it reads them again (a holder is told over ACP).
   */
  agentStateChanged(changed: string | null): void {
    const sessionId = this.sessionId;
    if (sessionId === null || (changed !== null && changed !== sessionId) || this.state.value.link.name !== "reading") return;
    // Not reachable: the journal's reading finds out and reconnects, and reads them again.
    this.readControls(sessionId).catch(() => undefined);
  }

  /** Sets the agent's mode, model or a config option over ACP; rejects with the agent's message. */
  async configure(change: ControlChange): Promise<void> {
    const sessionId = this.sessionId;
    if (sessionId === null) return;
    const { method, params } = requestOf(change, sessionId, this.controls.value);
    let result: unknown;
    try {
      const connection = await this.whenLive();
      if (!connection) throw new Error("Berth cannot be reached");
      result = await connection.agent.request(method, params);
    } catch (error) {
      throw new Error(errorWords(error));
    }
    this.controls.set(controlsWithChange(this.controls.value, change, result));
  }

  /**
   * Releases this page's hold on the session (it stays) and disconnects. Messages it did not send (failed ones, or
   * queued ones never tried, left when the page closes it) go back to the session's draft, so none is lost without a
   * word; one being (or once) sent may be the agent's already.
   */
  async close(): Promise<void> {
    if (this.closed()) return;
    const { link, sessionId, outbox } = this.state.value;
    // What a failed chat held too: Reconnect opens another, whose message box reads the draft again. Not one cut off
    // while being sent (tried): its turn may be in the journal already, and sending it again would repeat it.
    const unsent = outbox.filter(
      (message) => message.state === "failed" || ((message.state === "queued" || message.state === "editing") && !message.tried),
    );
    if (sessionId !== null)
      keepUnsent(
        sessionId,
        unsent.map((message) => message.text),
      );
    this.patch({ link: { name: "closed" } });
    this.reconnector.stop();
    clearInterval(this.followTimer);
    this.terminals.stop();
    const connection = this.connection.current;
    if (connection && sessionId !== null && link.name === "live") {
      // A link that died without a word (a laptop's sleep) answers nothing: the socket is closed all the same, which
      // releases the hold too.
      const answered = connection.agent.request("session/close", { sessionId }).catch(() => undefined);
      await Promise.race([answered, new Promise((resolve) => setTimeout(resolve, CLOSE_ANSWER_MS))]);
    }
    this.connection.close();
  }

  // Reading

  private async read(sessionId: string): Promise<string> {
    try {
      await Promise.all([this.journal.catchUp(), this.readControls(sessionId)]);
      this.reached();
    } catch (error) {
      if (isGone(error)) {
        this.fail(errorWords(error));
        throw new Error(errorWords(error));
      }
      this.lost("reading", errorWords(error));
    }
    return sessionId;
  }

  /**
   * The agent's mode, model and options as the host keeps them with the session: shown while the
   * session is only read, without starting its agent (L9). Holding it brings the agent's own answer.
   */
  private async readControls(sessionId: string): Promise<void> {
    const read = ++this.controlsReads;
    const state = await api.agentState(sessionId);
    // A later read (a later change) answered first: it is the newer one.
    if (read !== this.controlsReads) return;
    if (this.state.value.link.name !== "reading") return;
    this.controls.set(controlsOfAnswer(state, this.controls.value.usage));
    this.commands.set(commandsOf(state.availableCommands));
  }

  private controlsReads = 0;

  /** Reads what the journal has beyond what is shown; one read at a time, another after it if asked meanwhile. */
  refresh(): void {
    this.journal.refresh();
  }

  // Going live

  private async create(opening: Extract<ChatOpening, { mode: "new" }>): Promise<string> {
    try {
      const connection = await this.openConnection();
      if (!connection) throw new Error("The chat was closed before its session started.");
      const meta: Record<string, unknown> = { [AGENT_META]: opening.agent };
      if (opening.workspace !== null) meta[WORKSPACE_META] = opening.workspace;
      if (opening.sandbox !== "configured") meta[SANDBOX_META] = { mode: opening.sandbox };
      if (opening.title !== null) meta[TITLE_META] = opening.title;
      if (opening.worktree !== null) meta[WORKTREE_META] = opening.worktree;
      const answer = await connection.agent.request("session/new", { cwd: opening.cwd, mcpServers: [], _meta: meta });
      const sessionId = answer.sessionId;
      this.controls.set(controlsOfAnswer(answer));
      this.patch({ sessionId, link: { name: "live" }, loading: false });
      return sessionId;
    } catch (error) {
      this.fail(errorWords(error));
      throw new Error(errorWords(error));
    }
  }

  /**
   * Opens the chat's connection; null if the page closed the chat meanwhile: that connection is closed again at once,
   * before it holds anything (close() found no connection to close, and a hidden one would hold the session forever).
   */
  private async openConnection(): Promise<ClientConnection | null> {
    const connection = await this.connection.open();
    if (!this.closed()) return connection;
    this.connection.close();
    return null;
  }

  private goingLive: Promise<ClientConnection | null> | null = null;

  /** The live connection, opening it (and holding the session) if the page was only reading. */
  private whenLive(): Promise<ClientConnection | null> {
    if (this.state.value.link.name === "live") return Promise.resolve(this.connection.current);
    if (this.state.value.link.name === "reading") return this.goLive();
    return this.goingLive ?? Promise.resolve(null);
  }

  private goLive(): Promise<ClientConnection | null> {
    this.goingLive ??= this.attach().finally(() => {
      this.goingLive = null;
    });
    return this.goingLive;
  }

  /** Opens a connection and resumes the session on it (no replay: the journal is read over REST). */
  private async attach(): Promise<ClientConnection | null> {
    const sessionId = this.sessionId!;
    this.patch({ link: { name: "connecting" } });
    clearInterval(this.followTimer);
    this.followTimer = undefined;
    try {
      const { cwd } = await api.session(sessionId);
      const connection = await this.openConnection();
      if (!connection) return null;
      const answer = await connection.agent.request("session/resume", { sessionId, cwd, mcpServers: [] });
      if (this.closed()) return null;
      // Usage read from the journal stays; modes, models and options are the agent's answer.
      this.controls.set(controlsOfAnswer(answer, this.controls.value.usage));
      this.patch({ link: { name: "live" } });
      this.reached();
      this.refresh();
      if (this.state.value.outbox.some((message) => message.tried)) {
        // One cut off while being sent may have its turn in the journal by now: nothing goes before the journal is
        // read (and the outbox reconciled with it), else it would be sent twice.
        this.checkingOutbox = true;
        void this.journal.refreshed().then(() => {
          this.checkingOutbox = false;
          if (!this.closed()) this.reconcile();
        });
      } else this.pump();
      return connection;
    } catch (error) {
      if (this.closed()) return null;
      if (isGone(error)) this.fail(errorWords(error));
      else this.lost("live", errorWords(error));
      return null;
    }
  }

  // Live updates

  private updated(notification: SessionNotification): void {
    if (notification.sessionId !== this.sessionId || this.closed()) return;
    const place = journalPlace(notification);
    this.followControls(notification.update, place?.seq);
    if (notification.update.sessionUpdate === "available_commands_update") this.commands.set(commandsOf(notification.update.availableCommands));
    // Not journaled (a running command's output as it grows): shown, never replayed.
    if (place === null) this.transcript.applyUpdate(notification.update, notification._meta);
    else this.journal.live(notification, place);
  }

  /** The controls after an update, live or read from the journal (`seq` where it has one). */
  private followControls(update: SessionUpdate, seq: number | undefined): void {
    if (update.sessionUpdate === "usage_update" && seq !== undefined) {
      if (seq <= this.usageSeq) return;
      this.usageSeq = seq;
    }
    const controls = controlsWithUpdate(this.controls.value, update);
    if (controls) this.controls.set(controls);
  }

  // The outbox

  /** Sends the next queued message if nothing runs and the session is held (holding it first if it is only read). */
  private pump(): void {
    const { outbox, link } = this.state.value;
    const next = nextToSend(outbox);
    if (!next || this.closed()) return;
    if (link.name === "reading") {
      void this.goLive();
      return;
    }
    const connection = this.connection.current;
    if (link.name !== "live" || !connection || this.prompting || this.checkingOutbox || this.turnRunning()) return;
    void this.prompt(connection, next.id, next.text);
  }

  private async prompt(connection: ClientConnection, id: number, text: string): Promise<void> {
    const sessionId = this.sessionId!;
    this.prompting = true;
    const afterSeq = this.transcript.lastSeq;
    this.patch({ outbox: withState(this.state.value.outbox, id, { state: "sending", afterSeq, tried: true }), turnRunning: true });
    let failure: string | null = null;
    let busy = false;
    try {
      const response = await connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      // `usage` is in ACP's unstable schema, not the stable one the SDK types this answer with.
      this.controls.set(controlsWithTurnUsage(this.controls.value, (response as { usage?: unknown }).usage));
    } catch (error) {
      failure = errorWords(error);
      busy = (rpcError(error)?.data as { code?: unknown } | undefined)?.code === "turn_in_flight";
    }
    this.prompting = false;
    if (this.closed()) return;
    // The journal tells whether the message got its turn (shown in the transcript) or not.
    this.refresh();
    await this.journal.refreshed();
    const ending: SendEnding = this.transcript.hasTurnFor(text, afterSeq)
      ? { name: "turn-started" }
      : busy || this.state.value.link.name !== "live"
        ? { name: "cut-off" }
        : { name: "refused", reason: failure ?? "the turn did not start" };
    this.patch({ outbox: withSendEnded(this.state.value.outbox, id, ending) });
    this.patch({ turnRunning: this.turnRunning() });
    this.pump();
  }

  /** The outbox after the journal was read: messages whose turn it has leave it (or are marked started). */
  private reconcile(): void {
    const outbox = reconciled(this.state.value.outbox, (message) => this.transcript.hasTurnFor(message.text, message.afterSeq));
    if (outbox !== this.state.value.outbox) this.patch({ outbox });
    this.patch({ turnRunning: this.turnRunning() });
    this.pump();
  }

  private showTurnRunning(): void {
    if (this.state.value.turnRunning !== this.turnRunning()) this.patch({ turnRunning: this.turnRunning() });
  }

  /** The overview's word on a running turn wins over the journal's (a crash can leave a turn without its end). */
  private turnRunning(): boolean {
    return this.prompting || (this.hostTurnActive ?? this.transcript.turnRunning);
  }

  // Losing and finding Berth again

  /** Berth could not be reached (or an attempt to reach it again failed): the next attempt waits longer each time. */
  private lost(then: ResumeTo, reason: string): void {
    if (this.closed() || this.state.value.link.name === "failed") return;
    this.connection.close();
    const reconnection = this.reconnector.lost(then, reason);
    if (reconnection === null) return;
    const { attempt, retryAt } = reconnection;
    this.patch({ reconnection, link: { name: "reconnecting", then, attempt, retryAt, reason } });
  }

  /** An attempt really worked (the session held, or the journal read): the next loss starts from the first delay. */
  private reached(): void {
    if (!this.closed() && this.reconnector.reached()) this.patch({ reconnection: connected });
  }

  /** The network is back (or the person asked): try now rather than at the scheduled time. */
  retryNow(): void {
    this.reconnector.retryNow();
  }

  /** The reconnector's attempt is due: the page reads again, or holds the session again. */
  private reconnect(then: ResumeTo, reconnection: Reconnection): void {
    if (this.state.value.link.name !== "reconnecting") return;
    this.patch({ link: { name: "reading" }, reconnection });
    if (then === "live") void this.goLive();
    else void this.read(this.sessionId!);
  }

  private fail(message: string): void {
    if (this.closed()) return;
    this.patch({ link: { name: "failed", message } });
    clearInterval(this.followTimer);
    this.followTimer = undefined;
    this.connection.close();
  }

  private closed(): boolean {
    return this.state.value.link.name === "closed";
  }

  private patch(change: Partial<ChatState>): void {
    this.state.set({ ...this.state.value, ...change });
    // Whatever the link became (held, read again after a reconnection, closed), terminals are followed or stopped.
    if (change.link) this.terminals.update();
  }
}

/** The session no longer exists: retrying will not help. */
function isGone(error: unknown): boolean {
  if (error instanceof ApiError) return error.status === 404;
  return rpcError(error)?.code === -32002;
}

/**
 * The JSON-RPC error an ACP request failed with. Told by its shape, not by the SDK's `RequestError`
 * class: the SDK is in the chunk loaded with the link, and this page must not load it to read an error.
 */
function rpcError(error: unknown): { readonly code: number; readonly data: unknown } | null {
  if (!(error instanceof Error) || error instanceof ApiError) return null;
  const { code, data } = error as { code?: unknown; data?: unknown };
  return typeof code === "number" ? { code, data } : null;
}
