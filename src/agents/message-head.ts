import type { RequestId } from "./prompts-in-flight.js";

/** What the start of a line shows of the JSON-RPC message it was meant to be. */
export type MessageHead =
  | { readonly kind: "response"; readonly id: RequestId }
  | { readonly kind: "request"; readonly id: RequestId; readonly method: string }
  | { readonly kind: "unknown" };

/** How much of a refused line is kept to read its head: the envelope's fields come first in practice. */
export const HEAD_CHARS = 512;

/**
 * Reads the top-level fields of a JSON object from the start of its text, which may be cut anywhere or malformed
 * further on: a response names an `id` and a `result` or an `error` and no `method`; a request an `id` and a `method`.
 * Why: a line refused before the SDK (too long, not JSON) may be the answer to a request of Berth's, or a request of
 * the agent's, and either must still be answered; its head is all that is kept of a line too long to buffer. Only the
 * first {@link HEAD_CHARS} characters of `text` are read.
 */
export function readMessageHead(text: string): MessageHead {
  // Only the head: the token patterns backtrack, and over a string of millions of characters they exhaust the stack.
  const fields = topLevelFields(text.length > HEAD_CHARS ? text.slice(0, HEAD_CHARS) : text);
  const id = fields.get("id");
  if (typeof id !== "string" && typeof id !== "number") return { kind: "unknown" };
  const method = fields.get("method");
  if (typeof method === "string") return { kind: "request", id, method };
  if (!fields.has("method") && (fields.has("result") || fields.has("error"))) return { kind: "response", id };
  return { kind: "unknown" };
}

const whitespace = /[ \t\r\n]*/y;
const stringToken = /"(?:[^"\\]|\\.)*"/y;
const scalarToken = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
/** An object or array value that is cut or not read: present, its content unknown. */
const nested = Symbol("nested");

/** The top-level fields readable from the start of `text`, up to where it is cut or stops being JSON. */
function topLevelFields(text: string): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  let at = skip(text, whitespace, 0);
  if (text[at] !== "{") return fields;
  at++;
  for (;;) {
    at = skip(text, whitespace, at);
    const key = token(text, stringToken, at);
    const name = key ? parsed(key.text) : undefined;
    if (!key || typeof name !== "string") return fields;
    at = skip(text, whitespace, key.end);
    if (text[at] !== ":") return fields;
    at = skip(text, whitespace, at + 1);
    const value = valueAt(text, at);
    if (!value) return fields;
    fields.set(name, value.value);
    at = skip(text, whitespace, value.end);
    if (text[at] !== ",") return fields;
    at++;
  }
}

/**
 * The value starting at `at`; an object or array counts as present even when cut (its end then is the text's), a
 * number or a string is read only if it is whole.
 */
function valueAt(text: string, at: number): { value: unknown; end: number } | undefined {
  if (text[at] === "{" || text[at] === "[") return { value: nested, end: endOfNested(text, at) };
  const found = token(text, stringToken, at) ?? token(text, scalarToken, at);
  // A number at the very end may be cut short: 12 of 123.
  if (!found || found.end === text.length) return undefined;
  const value = parsed(found.text);
  return value === unreadable ? undefined : { value, end: found.end };
}

const unreadable = Symbol("unreadable");

/** A token's value, or `unreadable` (a string with a bad escape). */
function parsed(tokenText: string): unknown {
  try {
    return JSON.parse(tokenText) as unknown;
  } catch {
    return unreadable;
  }
}

/** Where the object or array at `at` ends (past its closing bracket), or the text's length if it is cut. */
function endOfNested(text: string, at: number): number {
  let depth = 0;
  let inString = false;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if ((c === "}" || c === "]") && --depth === 0) return i + 1;
  }
  return text.length;
}

function token(text: string, pattern: RegExp, at: number): { text: string; end: number } | undefined {
  pattern.lastIndex = at;
  const match = pattern.exec(text);
  return match ? { text: match[0], end: pattern.lastIndex } : undefined;
}

function skip(text: string, pattern: RegExp, at: number): number {
  return token(text, pattern, at)?.end ?? at;
}
