import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "../protocol/json-char-codes.js";

/**
 * The journal row of an agent's `session/update` line: `{"update":…}`, with `,"_meta":…` when the notification has a
 * `_meta` (one that is not null, false, 0 or ""), each value the line's own text, sliced out, never re-encoded. The
 * JSON-RPC envelope (`jsonrpc`, `method`, `params`, the agent's `sessionId`) is left out: the row's columns name the
 * session, and an update reads as `{ update, _meta? }` whatever its form (`events.ts`).
 *
 * Read as `JSON.parse` reads the line: any whitespace and key order, escaped keys, a key given twice (the last counts).
 * A line that is not such a notification comes back as it is (the journal then stores the parsed update serialised).
 *
 * Why slicing: it runs on the host's main thread once per chunk (`Journal.update`), and a scan of the line's characters
 * costs less than serialising the update again; the row is also the text live clients are sent (`server/shared-frames.ts`).
 */
export function updateRow(line: string): string {
  try {
    return sliced(line) ?? line;
  } catch {
    return line; // an escape or a literal JSON.parse refuses: not a line the fast path took
  }
}

function sliced(line: string): string | undefined {
  let update: Slice | undefined;
  let meta: Slice | undefined;
  const end = members(line, skipSpace(line, 0), (key, start) => {
    if (key !== "params") return valueEnd(line, start);
    update = meta = undefined;
    // An earlier `params` that is no object (null, a number…) is passed: JSON.parse keeps the last one.
    if (line.charCodeAt(start) !== OPEN_BRACE) return valueEnd(line, start);
    return members(line, start, (field, at) => {
      const to = valueEnd(line, at);
      if (field === "update") update = [at, to];
      else if (field === "_meta") meta = [at, to];
      return to;
    });
  });
  if (end < 0 || update === undefined || line.charCodeAt(update[0]) !== OPEN_BRACE) return undefined;
  const updateText = line.slice(update[0], update[1]);
  const metaText = meta === undefined ? undefined : line.slice(meta[0], meta[1]);
  return metaText !== undefined && truthy(metaText) ? `{"update":${updateText},"_meta":${metaText}}` : `{"update":${updateText}}`;
}

/** Where a value starts and ends in the line. */
type Slice = [start: number, end: number];

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

/**
 * The members of the object starting at `at`: `member` gets each key (unescaped) and where its value starts, and
 * returns where the value ends. Returns where the object ends, or -1 if there is none there.
 */
function members(text: string, at: number, member: (key: string, start: number) => number): number {
  if (text.charCodeAt(at) !== OPEN_BRACE) return -1;
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return i + 1;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return -1;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return -1;
    const raw = text.slice(i + 1, keyEnd - 1);
    const key = raw.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return -1;
    const valueEndAt = member(key, skipSpace(text, i + 1));
    if (valueEndAt < 0) return -1;
    i = skipSpace(text, valueEndAt);
    const next = text.charCodeAt(i);
    if (next === CLOSE_BRACE) return i + 1;
    if (next !== COMMA) return -1;
    i = skipSpace(text, i + 1);
  }
}

/** Where the value starting at `at` ends (the line is JSON: only its extent is found here), or -1. */
function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return stringEnd(text, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        i = stringEnd(text, i) - 1;
        if (i < 0) return -1;
      } else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
      else if ((code === CLOSE_BRACE || code === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return -1;
  }
  // A number, true, false or null: up to what follows it.
  let i = at;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isSpace(code)) break;
    i++;
  }
  return i > at ? i : -1;
}

/** Where the string whose opening quote is at `at` ends (after its closing quote), or -1. */
function stringEnd(text: string, at: number): number {
  for (let from = at + 1; ; ) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Whether a `_meta` value counts, as the host's `meta ? … : …` takes it: an object (the usual) at once, else as parsed. */
function truthy(value: string): boolean {
  const first = value.charCodeAt(0);
  return first === OPEN_BRACE || first === OPEN_BRACKET || Boolean(JSON.parse(value));
}
