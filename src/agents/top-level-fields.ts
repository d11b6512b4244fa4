import { MAX_ID_LENGTH } from "../protocol/id-limits.js";
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "../protocol/json-char-codes.js";

/** The top-level fields of a JSON-RPC message that tell what it is, as far as its text could be read. */
export interface EnvelopeFields {
  /** `id`, if it is a string or a number. */
  readonly id: string | number | undefined;
  /** `method`, if it is a string. */
  readonly method: string | undefined;
  readonly hasMethod: boolean;
  readonly hasResult: boolean;
  readonly hasError: boolean;
}

/**
 * The longest key or scalar kept, in characters as written: the longest id the SDK takes, every character escaped.
 * Anything longer is skipped, not kept (and a longer scalar is checked only for the characters a number is made of).
 */
const TOKEN_LIMIT = MAX_ID_LENGTH * 6;

/** Where the reader is in the object's text. */
type State =
  | "before-object" // whitespace, then `{`
  | "before-key" // after `{` or `,`: whitespace, then a key (or `}`)
  | "key" // inside a key's quotes
  | "key-escape" // right after a backslash in a key
  | "before-colon"
  | "before-value"
  | "string" // inside a top-level string value
  | "string-escape"
  | "scalar" // a top-level number, true, false or null
  | "nested" // inside a top-level object or array value, `depth` brackets deep
  | "nested-string"
  | "nested-string-escape"
  | "after-value" // whitespace, then `,` or `}`
  | "done" // the object ended: nothing after it is read
  | "broken"; // the text stopped being JSON: nothing after it is read

type Wanted = "id" | "method" | "result" | "error";
const wanted: ReadonlySet<string> = new Set<Wanted>(["id", "method", "result", "error"]);
/** A value that is present but not kept: an object, an array, or a scalar over {@link TOKEN_LIMIT}. */
const unkept = Symbol("unkept");
/** The start of a number too long to keep: it is skipped if it goes on as a number can. */
const longNumber = /^-?[0-9][0-9.eE+-]*$/;

/**
 * Reads the top-level fields of a JSON object from its text fed piece by piece, keeping only what tells a JSON-RPC
 * message's kind (`id`, `method`, whether `result` and `error` are there), never the text itself.
 * Why: a line the fast path refuses (longer than the SDK's limit, or not JSON) must still be answered if it is the
 * answer to a request of Berth's or a request of the agent's, and its `id` may come after megabytes of `result` or
 * `params`. So the whole line is read, in constant memory and linear time: nested values and strings of any length
 * are skipped by tracking depth and string state, one character at a time (no pattern that backtracks: over millions
 * of characters one exhausted the stack). Fields read up to where the text is cut or stops being JSON count, as
 * `JSON.parse` of a whole text would read them (the last of a repeated key wins); an object or array counts as present
 * once it opens, a string or a number once it is whole. Nested values are skipped, not checked.
 */
export class TopLevelFieldReader {
  private state: State = "before-object";
  /** The brackets open inside a top-level nested value. */
  private depth = 0;
  /** The current key or scalar as written, up to one character over {@link TOKEN_LIMIT}. */
  private token = "";
  /** The key whose value is being read, if it is one of the wanted ones. */
  private key: Wanted | undefined;
  private readonly values = new Map<Wanted, unknown>();

  /** Reads the next piece of the text. */
  feed(text: string): void {
    let at = 0;
    while (at < text.length && this.state !== "done" && this.state !== "broken") at = this.step(text, at);
  }

  /** The text ends here (its line did): a number or a literal it ends with is whole, not cut. */
  end(): void {
    if (this.state === "scalar") this.scalarEnded();
  }

  /** What is read so far. */
  fields(): EnvelopeFields {
    const id = this.values.get("id");
    const method = this.values.get("method");
    return {
      id: typeof id === "string" || typeof id === "number" ? id : undefined,
      method: typeof method === "string" ? method : undefined,
      hasMethod: this.values.has("method"),
      hasResult: this.values.has("result"),
      hasError: this.values.has("error"),
    };
  }

  /** Reads `text` from `at` as far as the current state goes; returns where it stopped. */
  private step(text: string, at: number): number {
    switch (this.state) {
      case "before-object":
        return this.expect(text, at, (code) => (code === OPEN_BRACE ? "before-key" : undefined));
      case "before-key":
        return this.expect(text, at, (code) => (code === QUOTE ? "key" : code === CLOSE_BRACE ? "done" : undefined));
      case "before-colon":
        return this.expect(text, at, (code) => (code === COLON ? "before-value" : undefined));
      case "after-value":
        return this.expect(text, at, (code) => (code === COMMA ? "before-key" : code === CLOSE_BRACE ? "done" : undefined));
      case "before-value":
        return this.valueStart(text, at);
      case "key":
      case "string":
        return this.stringPart(text, at);
      case "key-escape":
      case "string-escape":
        this.keep(text, at, at + 1);
        this.state = this.state === "key-escape" ? "key" : "string";
        return at + 1;
      case "scalar":
        return this.scalarPart(text, at);
      case "nested":
        return this.nestedPart(text, at);
      case "nested-string":
        return this.nestedStringPart(text, at);
      case "nested-string-escape":
        this.state = "nested-string";
        return at + 1;
      case "done":
      case "broken":
        return text.length;
    }
  }

  /** Skips whitespace, then moves to the state `next` gives for the character after it (broken if none). */
  private expect(text: string, at: number, next: (code: number) => State | undefined): number {
    const i = skipWhitespace(text, at);
    if (i === text.length) return i;
    const state = next(text.charCodeAt(i));
    this.state = state ?? "broken";
    if (state === "key") this.token = "";
    return i + 1;
  }

  private valueStart(text: string, at: number): number {
    const i = skipWhitespace(text, at);
    if (i === text.length) return i;
    const code = text.charCodeAt(i);
    this.token = "";
    if (code === QUOTE) {
      this.state = "string";
      return i + 1;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      this.set(unkept);
      this.depth = 1;
      this.state = "nested";
      return i + 1;
    }
    // Anything else is a number or a literal, or breaks the text when it is found to be none.
    this.state = "scalar";
    return i;
  }

  /** Inside a key or a top-level string: up to its closing quote or a backslash. */
  private stringPart(text: string, at: number): number {
    let i = at;
    let code = 0;
    for (; i < text.length; i++) {
      code = text.charCodeAt(i);
      if (code === QUOTE || code === BACKSLASH) break;
    }
    this.keep(text, at, i);
    if (i === text.length) return i;
    if (code === BACKSLASH) {
      this.keep(text, i, i + 1);
      this.state = this.state === "key" ? "key-escape" : "string-escape";
      return i + 1;
    }
    const value = this.token.length > TOKEN_LIMIT ? unkept : decoded(`"${this.token}"`);
    if (value === undefined) this.state = "broken";
    else if (this.state === "key") {
      this.key = typeof value === "string" && wanted.has(value) ? (value as Wanted) : undefined;
      this.state = "before-colon";
    } else {
      this.set(value);
      this.state = "after-value";
    }
    return i + 1;
  }

  /** A top-level number or literal: whole once a character that cannot be part of it follows. */
  private scalarPart(text: string, at: number): number {
    let i = at;
    while (i < text.length && isScalarPart(text.charCodeAt(i))) i++;
    this.keep(text, at, i);
    if (i < text.length) this.scalarEnded();
    return i;
  }

  private scalarEnded(): void {
    const value = this.token.length <= TOKEN_LIMIT ? decoded(this.token) : longNumber.test(this.token) ? unkept : undefined;
    if (value === undefined) this.state = "broken";
    else {
      this.set(value);
      this.state = "after-value";
    }
  }

  private nestedPart(text: string, at: number): number {
    for (let i = at; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        this.state = "nested-string";
        return i + 1;
      }
      if (code === OPEN_BRACE || code === OPEN_BRACKET) this.depth++;
      else if ((code === CLOSE_BRACE || code === CLOSE_BRACKET) && --this.depth === 0) {
        this.state = "after-value";
        return i + 1;
      }
    }
    return text.length;
  }

  private nestedStringPart(text: string, at: number): number {
    for (let i = at; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        this.state = "nested";
        return i + 1;
      }
      if (code === BACKSLASH) {
        this.state = "nested-string-escape";
        return i + 1;
      }
    }
    return text.length;
  }

  /** Adds `text` from `from` to `to` to the token, up to one character past the limit (which marks it too long). */
  private keep(text: string, from: number, to: number): void {
    const room = TOKEN_LIMIT + 1 - this.token.length;
    if (room > 0 && to > from) this.token += text.slice(from, Math.min(to, from + room));
  }

  private set(value: unknown): void {
    if (this.key !== undefined) this.values.set(this.key, value);
  }
}

/** The value of a whole JSON token, or undefined if it is not one (a bad escape, `tru`, `01`). */
function decoded(token: string): unknown {
  try {
    return JSON.parse(token) as unknown;
  } catch {
    return undefined;
  }
}

function skipWhitespace(text: string, at: number): number {
  let i = at;
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) break;
  }
  return i;
}

/** A character a number or a literal may go on with (the token is checked once whole): letters, digits, `+-.`. */
function isScalarPart(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    code === 0x2b ||
    code === 0x2d ||
    code === 0x2e
  );
}
