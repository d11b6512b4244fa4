import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { AgentSessionState } from "./agent-session-state.js";
import { plainText } from "../store/plain-text.js";

/** A title a person gave that cannot be one (not a string, empty, too long). */
export class InvalidTitleError extends Error {
  override readonly name = "InvalidTitleError";
}

const MAX_TITLE_LENGTH = 200;

/** Lone surrogate halves, which no encoding can store (with `u`, a whole pair is one code point, never matched). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;

/**
 * Text as a title holds it: one line (runs of white space, line breaks included, become one space), without control
 * characters (PostgreSQL's text cannot hold a NUL) and with a lone surrogate half as U+FFFD, trimmed.
 */
function oneLine(text: string): string {
  return text
    .replace(/\s+/gu, " ")
    .replace(/\p{Cc}/gu, "")
    .replace(LONE_SURROGATE, "\uFFFD")
    .trim();
}

/**
 * The title as stored: one line ({@link oneLine}), 1 to 200 characters; null clears it (the next prompt titles the
 * session again).
 */
export function normalTitle(title: unknown): string | null {
  if (title === null) return null;
  if (typeof title !== "string")
    throw new InvalidTitleError(`a title must be a string or null, got ${title === undefined ? "nothing" : typeof title}`);
  const line = oneLine(title);
  if (line === "") throw new InvalidTitleError("a title must not be empty (send null to clear it)");
  if ([...line].length > MAX_TITLE_LENGTH)
    throw new InvalidTitleError(`a title must be at most ${MAX_TITLE_LENGTH} characters, got ${[...line].length}`);
  return line;
}

/** What every client holding the session is told, and what a replay tells again: ACP's own title update. */
export function titleUpdate(title: string | null): SessionUpdate {
  return { sessionUpdate: "session_info_update", title };
}

/** About the length of a generated title: a list or a tab shows it whole. */
const GENERATED_TITLE_LENGTH = 60;

/**
 * The title Berth makes from a prompt when neither a person nor the agent named the session: the
 * Markdown's words, the first sentence of the first line with any, at most about 60 characters,
 * cut at a word with an ellipsis. Null when the prompt has no words.
 */
export function generatedTitle(prompt: string): string | null {
  const line = plainText(prompt)
    .split("\n")
    .map(oneLine)
    .find((text) => text !== "");
  if (line === undefined) return null;
  // A sentence ends at . ! or ? before a space: "cart.ts" and "v1.2" go on.
  const sentence = /^.*?[.!?](?=\s|$)/u.exec(line)?.[0] ?? line;
  return clipped(sentence, GENERATED_TITLE_LENGTH);
}

/** `text` at most `max` characters: cut at the last word that fits (mid-word only for one long word), with an ellipsis. */
function clipped(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const head = chars.slice(0, max - 1).join("");
  const atWord = head.replace(/\s+\S*$/u, "");
  return `${(atWord.length >= head.length / 2 ? atWord : head).replace(/[\s,;:.!?-]+$/u, "")}…`;
}

/** The session's title, and its state, once settled who named it. */
export interface Titled {
  readonly title: string | null;
  readonly agentState: AgentSessionState;
}

/** The agent's title kept in the session's state, and the title shown now: null when a person's name stands. */
export interface AgentTitled {
  readonly retitle: string | null;
  readonly agentState: AgentSessionState;
}

/**
 * The agent named the session (its own `session_info_update` with a title): the title shown becomes
 * it unless a person named the session, whose name stands. The agent's title is kept either way
 * (a person clearing their name gets it back). Null for an update that names nothing.
 */
export function agentTitled(state: AgentSessionState, update: SessionUpdate): AgentTitled | null {
  if (update.sessionUpdate !== "session_info_update" || typeof update.title !== "string") return null;
  const title = oneLine(update.title);
  if (title === "") return null;
  const own = clipped(title, MAX_TITLE_LENGTH);
  if (state.titledBy === "person") return { retitle: null, agentState: { ...state, title: own } };
  return { retitle: own, agentState: { ...state, title: own, titledBy: "agent" } };
}

/** A person named the session (`next`, normalized), or cleared their name (null): then the agent's own title, if it gave one. */
export function personTitled(state: AgentSessionState, next: string | null): Titled {
  const { titledBy: _cleared, ...rest } = state;
  if (next !== null) return { title: next, agentState: { ...rest, titledBy: "person" } };
  return typeof state.title === "string" ? { title: state.title, agentState: { ...rest, titledBy: "agent" } } : { title: null, agentState: rest };
}
