import { methods } from "@agentclientprotocol/sdk";
import { updateText } from "../protocol/update-text.js";

/**
 * One serialisation of an event for every client shown it as it is: the feeds of one session build the same
 * `session/update` params object for the same update and `_meta` (the journaled ones, shared by all of them), and the
 * sockets turn that object into its frame once. Both maps are weak: they last as long as the update is referenced.
 */
const paramsOfUpdate = new WeakMap<object, { readonly sessionId: string; readonly meta: unknown; readonly params: object }>();
const frameOfParams = new WeakMap<object, string>();
/** The update's own text (`{"update":…,"_meta"?:…}`) for params made of it and the `_meta` that text carries. */
const textOfParams = new WeakMap<object, string>();

/** The `session/update` params for `update` with `_meta` `meta`: the same object for the same three. */
export function sessionUpdateParams(sessionId: string, update: object, meta: Record<string, unknown> | null | undefined): object {
  const known = paramsOfUpdate.get(update);
  if (known && known.sessionId === sessionId && known.meta === meta) return known.params;
  const params = meta ? { sessionId, update, _meta: meta } : { sessionId, update };
  paramsOfUpdate.set(update, { sessionId, meta, params });
  const text = updateText(update, meta);
  if (text !== undefined) textOfParams.set(params, text);
  return params;
}

/** The JSON-RPC notification's text; a `session/update`'s computed once per params object. */
export function notificationFrame(method: string, params: unknown): string {
  if (method !== methods.client.session.update || typeof params !== "object" || params === null) {
    return JSON.stringify({ jsonrpc: "2.0", method, params });
  }
  let frame = frameOfParams.get(params);
  if (frame === undefined) {
    const text = textOfParams.get(params);
    frame =
      text === undefined
        ? JSON.stringify({ jsonrpc: "2.0", method, params })
        : // `{"update":…}` opened: Berth's session id first, then the update and `_meta` as the text has them.
          `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":{"sessionId":${JSON.stringify((params as { sessionId: string }).sessionId)},${text.slice(1)}}`;
    frameOfParams.set(params, frame);
  }
  return frame;
}
