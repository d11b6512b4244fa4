import { randomUUID } from "node:crypto";
import { isAbsolute } from "node:path";
import { RequestError, type McpServer } from "@agentclientprotocol/sdk";
import type { Conversation, ConversationEntry, ConversationStore } from "./conversation-store.js";
import { defaultSettings, type SessionSettings } from "./session-state.js";

/** A session runs one turn at a time; `running` carries what cancels it and when it ends. */
type TurnState = { name: "idle" } | { name: "running"; cancel: AbortController; ended: Promise<void> };

/** A session this agent process currently serves. */
export interface DemoSession {
  readonly id: string;
  readonly conversation: Conversation;
  /** As received in the latest `session/new`, `session/load` or `session/resume`. */
  mcpServers: McpServer[];
  turn: TurnState;
  /** How many `session/cancel`s it got: a queued prompt sent before the latest one ends cancelled without running. */
  cancels: number;
}

/**
 * The sessions open in this process, backed by the conversation store so that a
 * new process can load or resume them.
 */
export class SessionRegistry {
  private readonly open = new Map<string, DemoSession>();

  constructor(private readonly store: ConversationStore) {}

  create(cwd: string, mcpServers: McpServer[]): DemoSession {
    requireAbsolute(cwd);
    const conversation: Conversation = { version: 1, sessionId: randomUUID(), cwd, entries: [] };
    this.store.save(conversation);
    return this.remember(conversation, mcpServers);
  }

  /** Opens a known session (in memory or on disk) for `session/load` or `session/resume`. */
  reopen(sessionId: string, cwd: string, mcpServers: McpServer[]): DemoSession {
    requireAbsolute(cwd);
    const session = this.open.get(sessionId);
    if (session) {
      session.mcpServers = mcpServers;
      this.moveTo(session.conversation, cwd);
      return session;
    }
    const conversation = this.store.read(sessionId);
    if (!conversation) throw RequestError.sessionNotFound(sessionId);
    this.moveTo(conversation, cwd);
    return this.remember(conversation, mcpServers);
  }

  /** A new session whose conversation and settings are a copy of `sessionId`'s as they are now (`session/fork`). */
  fork(sessionId: string, cwd: string, mcpServers: McpServer[]): DemoSession {
    requireAbsolute(cwd);
    const original = this.open.get(sessionId)?.conversation ?? this.store.read(sessionId);
    if (!original) throw RequestError.sessionNotFound(sessionId);
    const conversation: Conversation = { ...structuredClone(original), sessionId: randomUUID(), cwd };
    this.store.save(conversation);
    return this.remember(conversation, mcpServers);
  }

  /** A session open in this process; anything else is "not found", as ACP requires. */
  get(sessionId: string): DemoSession {
    const session = this.open.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  /** Cancels the session's turn, if any, and forgets it in memory (its file stays). */
  close(sessionId: string): void {
    const session = this.get(sessionId);
    if (session.turn.name === "running") session.turn.cancel.abort();
    this.open.delete(sessionId);
  }

  settingsOf(session: DemoSession): SessionSettings {
    return session.conversation.settings ?? defaultSettings;
  }

  changeSettings(session: DemoSession, settings: SessionSettings): void {
    session.conversation.settings = settings;
    this.store.save(session.conversation);
  }

  append(session: DemoSession, entry: ConversationEntry): void {
    session.conversation.entries.push(entry);
    this.store.save(session.conversation);
  }

  private remember(conversation: Conversation, mcpServers: McpServer[]): DemoSession {
    const session: DemoSession = {
      id: conversation.sessionId,
      conversation,
      mcpServers,
      turn: { name: "idle" },
      cancels: 0,
    };
    this.open.set(session.id, session);
    return session;
  }

  private moveTo(conversation: Conversation, cwd: string): void {
    if (conversation.cwd === cwd) return;
    conversation.cwd = cwd;
    this.store.save(conversation);
  }
}

function requireAbsolute(cwd: string): void {
  if (!isAbsolute(cwd)) throw RequestError.invalidParams({ cwd }, `cwd must be an absolute path, got "${cwd}"`);
}
