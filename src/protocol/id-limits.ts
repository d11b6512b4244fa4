// The one rule for overlong ACP ids, so every transport refuses them with the same code and message.

/** The longest session or request id the ACP SDK takes (its `maxIdLength`); longer ones would close the connection. */
export const MAX_ID_LENGTH = 1024;

/** A JSON-RPC error object, as sent in a response's `error`. */
export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** How a message with an overlong id is answered: under `id` (null when the request id itself is what is refused). */
export interface OverlongIdRefusal {
  readonly id: unknown;
  readonly error: JsonRpcErrorObject;
}

/**
 * The error for an id over {@link MAX_ID_LENGTH}: an overlong request id makes the request itself invalid
 * (-32600, it cannot be answered under that id), an overlong session id is a bad parameter (-32602).
 */
export function overlongIdError(what: "request id" | "session id", length: number): JsonRpcErrorObject {
  const [code, kind] = what === "request id" ? [-32600, "Invalid request"] : [-32602, "Invalid params"];
  return {
    code,
    message: `${kind}: the ${what} is ${length} characters long, more than the limit of ${MAX_ID_LENGTH}`,
    data: { limit: MAX_ID_LENGTH },
  };
}

/**
 * The refusal of a parsed JSON-RPC message whose string id or `params.sessionId` (or a session id a transport
 * carries beside the message, `sessionIdLength`) is over {@link MAX_ID_LENGTH}; undefined when every id fits.
 */
export function overlongIdRefusal(message: unknown, sessionIdLength = 0): OverlongIdRefusal | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { id, params } = message as { id?: unknown; params?: unknown };
  if (typeof id === "string" && id.length > MAX_ID_LENGTH) return { id: null, error: overlongIdError("request id", id.length) };
  const sessionId = typeof params === "object" && params !== null ? (params as { sessionId?: unknown }).sessionId : undefined;
  const longest = Math.max(typeof sessionId === "string" ? sessionId.length : 0, sessionIdLength);
  if (longest <= MAX_ID_LENGTH) return undefined;
  return { id: id === undefined ? null : id, error: overlongIdError("session id", longest) };
}
