/**
 * The JSON text of an update as Berth received or stored it, `{"update":…}` or `{"update":…,"_meta":…}` (an update
 * row: `src/store/update-row.ts`), kept against the parsed update and the `_meta` that text carries. A `session/update`
 * frame for that update and `_meta` is then the text in an envelope (`src/server/shared-frames.ts`), not the object
 * serialised again: the agent's own text, as transparent as it gets and several microseconds a chunk cheaper.
 * Weak: a text lasts as long as its update object.
 */
const textOfUpdate = new WeakMap<object, { readonly meta: unknown; readonly text: string }>();

/** `text` is `{"update":…}` for `update`, with `,"_meta":…` exactly when `meta` is truthy (and then for `meta`). */
export function rememberUpdateText(update: object, meta: unknown, text: string): void {
  textOfUpdate.set(update, { meta, text });
}

/** The text remembered for `update`, if it was remembered with this very `meta` (an update shown with other `_meta` has none). */
export function updateText(update: object, meta: unknown): string | undefined {
  const known = textOfUpdate.get(update);
  return known !== undefined && known.meta === meta ? known.text : undefined;
}
