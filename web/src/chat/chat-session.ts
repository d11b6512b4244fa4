import { errorWords } from "../util/error-words.js";
import type { ClientConnection, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";
import { api, ApiError } from "../api/rest.js";
import type { QuestionAnswer, ReadEvent, SessionView, TerminalOutputResult } from "../api/types.js";
import { Observable } from "../live/observable.js";
import { yieldToPage } from "../util/yield-to-page.js";
import { attemptStarted, connected, lostConnection, type Reconnection } from "../live/reconnection.js";
import { toFront, withState, withText, without, type Outbox } from "./outbox.js";
import { AGENT_META, SANDBOX_META, SEQ_FROM_META, SEQ_META, TITLE_META, WORKSPACE_META, WORKTREE_META } from "../../../src/protocol/meta-keys.js";
import { commandsOf, type SlashCommand } from "./slash-commands.js";
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
import { retriableImport } from "../chunk-import.js";

/** The ACP SDK and the link: a chunk of their own, loaded once the page holds a session (reading needs neither). */
const importAcpLink = retriableImport(() => import("./acp-link.js"));

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
  | { readonly name: "reconnecting"; readonly then: "reading" | "live"; readonly attempt: number; readonly retryAt: number; readonly reason: string }
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

/** Journal events read per REST request (the most Berth serves); consecutive chunks come merged, so far fewer to apply. */
const PAGE = 10_000;
/** The most time spent applying journal events before the page gets a turn. */
const SLICE_MS = 8;
/** How often a session read without holding it is read again while another client runs a turn. */
const FOLLOW_MS = 1_000;
/** How often a running command's output is read while the session is only read (as often as Berth sends it to a holder). */
const TERMINAL_MS = 500;

/**
 * One session on the page. Its transcript is the session's journal, read over REST (which holds
 * nothing) and followed live over ACP once the person prompts or resumes; each journal event is
 * applied once, in order, whichever way it came. A lost connection is retried with backoff, and a
 * message sent meanwhile waits in the outbox: nothing typed is dropped without saying so.
 */
export class ChatSession {
  readonly state: Observable<ChatState>;
  readonly transcript = new Transcript();
  /** The agent's mode, model, config options and usage for this session: the chat header's pickers. */
  readonly controls = new Observable<AgentControls>(noControls);
  /** The agent's commands, for the prompt's `/` menu: as Berth keeps them while the session is read, then the agent's updates. */
  readonly commands = new Observable<readonly SlashCommand[]>([]);
  /** The session's id once it is open; rejects with a message naming what went wrong. */
  readonly opened: Promise<string>;
  private connection: ClientConnection | null = null;
  /** Live updates that arrived while the journal was being read, or ahead of it: applied after. */
  private held: SessionNotification[] = [];
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private followTimer: ReturnType<typeof setInterval> | undefined;
  private terminalTimer: ReturnType<typeof setInterval> | undefined;
  private readingTerminals = false;
  /** Terminals whose command exited or whose output is gone: there is nothing more to read of them. */
  private readonly settledTerminals = new Set<string>();
  private nextMessageId = 1;
  private prompting = false;
  /** The journal seq of the usage report the controls show: an older one read after it is passed over. */
  private usageSeq = 0;
  /** Whether the host runs a turn in this session, as the overview last said. */
  private hostTurnActive: boolean | undefined;
  private readonly online = (): void => this.retryNow();

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
      if (this.state.value.turnRunning !== this.turnRunning()) this.patch({ turnRunning: this.turnRunning() });
      this.followTerminals();
    });
    globalThis.addEventListener?.("online", this.online);
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
    const message = { id: this.nextMessageId++, text, state: "queued", error: null, afterSeq: this.transcript.lastSeq, tried: false } as const;
    this.patch({ outbox: [...this.state.value.outbox, message] });
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
    if (this.state.value.outbox.some((message) => message.id === messageId && message.state === "queued")) {
      this.patch({ outbox: withState(this.state.value.outbox, messageId, { state: "editing" }) });
    }
  }

  /** The edit is done: `text` goes out in the message's turn (empty removes it), or null keeps it as it was. */
  finishEdit(messageId: number, text: string | null): void {
    const { outbox } = this.state.value;
    if (!outbox.some((message) => message.id === messageId && message.state === "editing")) return;
    this.patch({ outbox: text === null ? withState(outbox, messageId, { state: "queued" }) : withText(outbox, messageId, text) });
    this.pump();
  }

  discard(messageId: number): void {
    this.patch({ outbox: without(this.state.value.outbox, messageId) });
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

  /** Releases this page's hold on the session (it stays) and disconnects. */
  async close(): Promise<void> {
    if (this.closed()) return;
    const { link, sessionId } = this.state.value;
    this.patch({ link: { name: "closed" } });
    clearTimeout(this.retryTimer);
    clearInterval(this.followTimer);
    clearInterval(this.terminalTimer);
    globalThis.removeEventListener?.("online", this.online);
    const connection = this.connection;
    this.connection = null;
    if (connection && sessionId !== null && link.name === "live") {
      await connection.agent.request("session/close", { sessionId }).catch(() => undefined);
    }
    connection?.close();
  }

  // Reading

  private async read(sessionId: string): Promise<string> {
    try {
      await Promise.all([this.catchUp(), this.readControls(sessionId)]);
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
    if (this.closed() || this.state.value.link.name === "reconnecting") return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = this.catchUp()
      .catch((error: unknown) => {
        if (isGone(error)) this.fail(errorWords(error));
        else this.lost(this.state.value.link.name === "live" ? "live" : "reading", errorWords(error));
      })
      .finally(() => {
        this.refreshing = null;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          this.refresh();
        }
      });
  }

  /** Reads the journal on from what is shown; one read at a time, each after the one before. */
  private catchUp(): Promise<void> {
    this.journalReads++;
    const read = this.reading.then(() => this.readJournal()).finally(() => this.journalReads--);
    this.reading = read.catch(() => undefined);
    return read;
  }

  private reading: Promise<void> = Promise.resolve();
  /** Journal reads asked for and not done: live updates are held meanwhile, so a page never covers what one applied. */
  private journalReads = 0;

  private async readJournal(): Promise<void> {
    const sessionId = this.sessionId!;
    for (;;) {
      const { events, more } = await api.events(sessionId, this.transcript.lastSeq, PAGE);
      if (this.closed()) return;
      // A page can be thousands of events (tool calls, chunks Berth could not merge): applied in slices, the page stays responsive.
      let sliceStart = performance.now();
      let overlapped = false;
      for (const event of events) {
        if (performance.now() - sliceStart > SLICE_MS) {
          await yieldToPage();
          if (this.closed()) return;
          sliceStart = performance.now();
        }
        // Merged chunks of which some are shown already: the next page, read from what is shown, has the rest.
        if (this.transcript.applyEvent(event) === "overlaps") {
          overlapped = true;
          break;
        }
        // Only usage is taken from the journal: a mode or option set by a request is not in it, the host's state has it.
        const update = event.kind === "update" ? (event.payload as { update?: SessionUpdate }).update : undefined;
        if (update?.sessionUpdate === "usage_update") this.followControls(update, event.seq);
      }
      if (!more && !overlapped) break;
      await yieldToPage();
    }
    // What arrived meanwhile was read with the journal, or comes next; a new gap is read again.
    const held = this.held;
    this.held = [];
    for (const [index, notification] of held.entries()) {
      const { [SEQ_META]: seq, [SEQ_FROM_META]: from, ...meta } = notification._meta ?? {};
      const last = seq as number;
      const first = typeof from === "number" ? from : last;
      if (last <= this.transcript.lastSeq) continue;
      if (first !== this.transcript.lastSeq + 1) {
        this.held = held.slice(index);
        this.refresh();
        break;
      }
      this.transcript.applyEvent(journalUpdate(notification, last, meta, first));
    }
    if (this.state.value.loading) this.patch({ loading: false });
    this.reconcile();
  }

  /**
   * A running command's output is read over REST as it grows, until it exits or its terminal is gone,
   * whether the page holds the session or only reads it: Berth sends a holder the output only of tool
   * calls it saw start while held. Reading holds nothing and starts no agent (L9).
   */
  private followTerminals(): void {
    const { name } = this.state.value.link;
    // Not while Berth is out of reach: reading starts again once the link is back.
    const follow =
      name !== "closed" &&
      name !== "failed" &&
      name !== "reconnecting" &&
      this.transcript.terminalsToRead().some((terminalId) => !this.settledTerminals.has(terminalId));
    if (follow && this.terminalTimer === undefined) {
      this.terminalTimer = setInterval(() => void this.readTerminals(), TERMINAL_MS);
      void this.readTerminals();
    }
    if (!follow && this.terminalTimer !== undefined) {
      clearInterval(this.terminalTimer);
      this.terminalTimer = undefined;
    }
  }

  private async readTerminals(): Promise<void> {
    this.followTerminals();
    if (this.terminalTimer === undefined || this.readingTerminals) return;
    this.readingTerminals = true;
    try {
      for (const terminalId of this.transcript.terminalsToRead()) {
        if (this.settledTerminals.has(terminalId)) continue;
        let output: TerminalOutputResult;
        try {
          output = await api.terminal(this.sessionId!, terminalId);
        } catch (error) {
          // Released or its location closed: nothing more to read (what the agent's final update carries is all there is).
          if (error instanceof ApiError && error.code === "terminal_not_found") {
            this.settledTerminals.add(terminalId);
            continue;
          }
          // Berth out of reach: the journal's reading finds out and reconnects; the next tick tries again.
          return;
        }
        if (this.closed()) return;
        if (output.exitStatus !== null) this.settledTerminals.add(terminalId);
        this.transcript.showTerminal(terminalId, output);
      }
    } finally {
      this.readingTerminals = false;
    }
  }

  // Going live

  private async create(opening: Extract<ChatOpening, { mode: "new" }>): Promise<string> {
    try {
      const connection = await this.connect();
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

  private goingLive: Promise<ClientConnection | null> | null = null;

  /** The live connection, opening it (and holding the session) if the page was only reading. */
  private whenLive(): Promise<ClientConnection | null> {
    if (this.state.value.link.name === "live") return Promise.resolve(this.connection);
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
      const connection = await this.connect();
      const answer = await connection.agent.request("session/resume", { sessionId, cwd, mcpServers: [] });
      if (this.closed()) return null;
      // Usage read from the journal stays; modes, models and options are the agent's answer.
      this.controls.set(controlsOfAnswer(answer, this.controls.value.usage));
      this.patch({ link: { name: "live" } });
      this.reached();
      this.refresh();
      this.pump();
      return connection;
    } catch (error) {
      if (this.closed()) return null;
      if (isGone(error)) this.fail(errorWords(error));
      else this.lost("live", errorWords(error));
      return null;
    }
  }

  private async connect(): Promise<ClientConnection> {
    this.connection?.close();
    const { connectAcp } = await importAcpLink();
    const connection = await connectAcp({ update: (notification) => this.updated(notification), asked: () => this.refresh() });
    this.connection = connection;
    void connection.closed.then(() => {
      if (this.connection !== connection || this.closed()) return;
      this.connection = null;
      const { link } = this.state.value;
      if (link.name === "live" || link.name === "connecting") this.lost("live", "The connection to Berth was lost.");
    });
    return connection;
  }

  // Live updates

  private updated(notification: SessionNotification): void {
    if (notification.sessionId !== this.sessionId || this.closed()) return;
    const { [SEQ_META]: seq, [SEQ_FROM_META]: from, ...meta } = notification._meta ?? {};
    this.followControls(notification.update, typeof seq === "number" ? seq : undefined);
    if (notification.update.sessionUpdate === "available_commands_update") this.commands.set(commandsOf(notification.update.availableCommands));
    if (typeof seq !== "number") {
      // Not journaled (a running command's output as it grows): shown, never replayed.
      this.transcript.applyUpdate(notification.update, notification._meta);
      return;
    }
    const first = typeof from === "number" ? from : seq;
    if (this.journalReads > 0) {
      this.held.push(notification);
      return;
    }
    if (first !== this.transcript.lastSeq + 1 && seq > this.transcript.lastSeq) {
      // Ahead of what was read (a prompt, a turn's end, a question came between): read the gap first.
      this.held.push(notification);
      this.refresh();
      return;
    }
    this.transcript.applyEvent(journalUpdate(notification, seq, meta, first));
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
    // A message being edited holds back the queue behind it: messages go out in the order they were typed.
    const next = outbox.find((message) => message.state === "queued" || message.state === "editing");
    if (!next || next.state === "editing" || this.closed()) return;
    if (link.name === "reading") {
      void this.goLive();
      return;
    }
    if (link.name !== "live" || !this.connection || this.prompting || this.turnRunning()) return;
    void this.prompt(this.connection, next.id, next.text);
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
    await this.refreshing?.catch(() => undefined);
    const message = this.state.value.outbox.find((m) => m.id === id);
    if (message) {
      if (this.transcript.hasTurnFor(text, afterSeq)) this.patch({ outbox: without(this.state.value.outbox, id) });
      // Another client's turn came first, or the connection went: it goes out again after.
      else if (busy || this.state.value.link.name !== "live") this.patch({ outbox: withState(this.state.value.outbox, id, { state: "queued" }) });
      else this.patch({ outbox: withState(this.state.value.outbox, id, { state: "failed", error: failure ?? "the turn did not start" }) });
    }
    this.patch({ turnRunning: this.turnRunning() });
    this.pump();
  }

  /**
   * Messages whose turn is in the journal are shown by the transcript, not the outbox; one whose
   * send was cut off by a lost connection but reached Berth is not sent twice.
   */
  private reconcile(): void {
    let outbox = this.state.value.outbox;
    for (const message of outbox) {
      if (!message.tried || message.state === "started" || !this.transcript.hasTurnFor(message.text, message.afterSeq)) continue;
      outbox = message.state === "sending" ? withState(outbox, message.id, { state: "started" }) : without(outbox, message.id);
    }
    if (outbox !== this.state.value.outbox) this.patch({ outbox });
    this.patch({ turnRunning: this.turnRunning() });
    this.pump();
  }

  /** The overview's word on a running turn wins over the journal's (a crash can leave a turn without its end). */
  private turnRunning(): boolean {
    return this.prompting || (this.hostTurnActive ?? this.transcript.turnRunning);
  }

  // Losing and finding Berth again

  /** Berth could not be reached (or an attempt to reach it again failed): the next attempt waits longer each time. */
  private lost(then: "reading" | "live", reason: string): void {
    if (this.closed() || this.state.value.link.name === "failed") return;
    this.connection?.close();
    this.connection = null;
    const reconnection = lostConnection(this.state.value.reconnection, reason, Date.now());
    // Already waiting: this is the same loss told twice (the socket's close and its request's failure).
    if (reconnection === this.state.value.reconnection) return;
    const { attempt, retryAt } = reconnection;
    this.patch({ reconnection, link: { name: "reconnecting", then, attempt, retryAt, reason } });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.reconnect(), Math.max(0, retryAt - Date.now()));
  }

  /** An attempt really worked (the session held, or the journal read): the next loss starts from the first delay. */
  private reached(): void {
    if (this.state.value.reconnection !== connected && !this.closed()) this.patch({ reconnection: connected });
  }

  /** The network is back (or the person asked): try now rather than at the scheduled time. */
  retryNow(): void {
    if (this.state.value.link.name !== "reconnecting") return;
    clearTimeout(this.retryTimer);
    this.reconnect();
  }

  private reconnect(): void {
    const link = this.state.value.link;
    if (link.name !== "reconnecting") return;
    this.patch({ link: { name: "reading" }, reconnection: attemptStarted(this.state.value.reconnection) });
    if (link.then === "live") void this.goLive();
    else void this.read(this.sessionId!);
  }

  private fail(message: string): void {
    if (this.closed()) return;
    this.patch({ link: { name: "failed", message } });
    this.connection?.close();
    this.connection = null;
  }

  private closed(): boolean {
    return this.state.value.link.name === "closed";
  }

  private patch(change: Partial<ChatState>): void {
    this.state.set({ ...this.state.value, ...change });
    // Whatever the link became (held, read again after a reconnection, closed), terminals are followed or stopped.
    if (change.link) this.followTerminals();
  }
}

/** A live update as the journal event it is (merged chunks: `first` to `seq`). */
function journalUpdate(notification: SessionNotification, seq: number, meta: Record<string, unknown>, first: number): ReadEvent {
  const event = { sessionId: notification.sessionId, seq, kind: "update", payload: { update: notification.update, _meta: meta } as never, at: 0 };
  return first < seq ? { ...event, seqFrom: first } : event;
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
