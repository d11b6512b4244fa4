import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "../protocol/json-char-codes.js";

/**
 * The deepest nesting of objects and arrays a client's message or request body may have. ACP messages
 * and REST bodies nest a dozen levels at most; thousands of levels overflow the stack of whatever walks
 * them recursively (a schema check, `JSON.stringify` on the way to the agent), which killed the agent.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether a JSON text nests objects and arrays deeper than `limit`: its brackets counted outside strings, nothing parsed. */
export function nestedDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  // Fewer characters than the limit cannot open more containers than it.
  if (text.length <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/**
 * The JSON text's top level with every nested object and array replaced by `null`, parsed: enough to read
 * a message's `id` and `method` without parsing (or walking) what a refused message nests. Undefined if
 * that is not JSON.
 */
function topLevelOf(text: string): unknown {
  let outline = "";
  let from = 0;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth === 2) outline += `${text.slice(from, i)}null`;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth-- === 2) from = i + 1;
    }
  }
  if (depth < 2) outline += text.slice(from);
  try {
    return JSON.parse(outline) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The id of a JSON-RPC request (so its caller is not left waiting); null if unreadable; undefined for anything
 * that is not a request. Read from the message's top level alone: what a refused message nests is never parsed.
 */
export function requestIdOf(text: string): string | number | null | undefined {
  const message = topLevelOf(text);
  if (message === undefined) return null;
  if (typeof message !== "object" || message === null || !("method" in message) || !("id" in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** The JSON-RPC error both ACP transports answer a message nested deeper than {@link MAX_JSON_DEPTH} with. */
export function tooDeepError(): { code: number; message: string; data: { limit: number } } {
  return {
    code: -32600,
    message: `Invalid request: the message nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the limit`,
    data: { limit: MAX_JSON_DEPTH },
  };
}

/** The index of the quote closing the string that opens at `start` (the text's end if it never closes). */
function closingQuote(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return text.length;
}
