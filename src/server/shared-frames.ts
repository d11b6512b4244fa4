import { methods } from "@agentclientprotocol/sdk";

/**
 * Sends a notification to one client. `frame`, when the caller has it, is the notification's JSON text: a transport
 * that writes text (a WebSocket) sends it as it is; one that serialises for itself (the SDK's) reads `params`.
 */
export type ClientNotify = (method: string, params: unknown, frame?: string) => void | Promise<void>;

/**
 * One serialisation of an update that has no text of its own (Berth's notices, the SDK's transport, a feed that is
 * not live) for every client shown it as it is: the feeds of one session build the same `session/update` params
 * object for the same update and `_meta`, and the sockets turn that object into its frame once. Both maps are weak:
 * they last as long as the update is referenced. An agent's update is sent as its own text instead
 * (`updateTextFrame`).
 */
const paramsOfUpdate = new WeakMap<object, { readonly sessionId: string; readonly meta: unknown; readonly params: object }>();
const frameOfParams = new WeakMap<object, string>();

/** The `session/update` params for `update` with `_meta` `meta`: the same object for the same three. */
export function sessionUpdateParams(sessionId: string, update: object, meta: Record<string, unknown> | null | undefined): object {
  const known = paramsOfUpdate.get(update);
  if (known && known.sessionId === sessionId && known.meta === meta) return known.params;
  const params = meta ? { sessionId, update, _meta: meta } : { sessionId, update };
  paramsOfUpdate.set(update, { sessionId, meta, params });
  return params;
}

/** The JSON-RPC notification's text; a `session/update`'s computed once per params object. */
export function notificationFrame(method: string, params: unknown): string {
  if (method !== methods.client.session.update || typeof params !== "object" || params === null) {
    return JSON.stringify({ jsonrpc: "2.0", method, params });
  }
  let frame = frameOfParams.get(params);
  if (frame === undefined) {
    frame = JSON.stringify({ jsonrpc: "2.0", method, params });
    frameOfParams.set(params, frame);
  }
  return frame;
}

/**
 * The `session/update` frame of an update's own text (`{"update":…}` or `{"update":…,"_meta":…}`, as the journal stored
 * it): that text in the envelope, after Berth's session id (`quotedSessionId`, already JSON). Nothing is serialised.
 */
export function updateTextFrame(quotedSessionId: string, text: string): string {
  return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${quotedSessionId},${text.slice(1)}}`;
}
