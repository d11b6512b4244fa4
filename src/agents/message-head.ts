import type { RequestId } from "./prompts-in-flight.js";
import { type EnvelopeFields, TopLevelFieldReader } from "./top-level-fields.js";

/** What the top-level fields of a line show of the JSON-RPC message it was meant to be. */
export type MessageHead =
  | { readonly kind: "response"; readonly id: RequestId }
  /** `method` undefined: not a string, or too long to keep (it is still a request, and still answered). */
  | { readonly kind: "request"; readonly id: RequestId; readonly method: string | undefined }
  | { readonly kind: "unknown" };

/**
 * The kind of message the fields show: a response names an `id` and a `result` or an `error` and no `method`; a
 * request an `id` and a `method` (a method makes it one, as for the SDK).
 * Why: a line refused before the SDK (too long, not JSON) may be the answer to a request of Berth's, or a request of
 * the agent's, and either must still be answered.
 */
export function messageHead(fields: EnvelopeFields): MessageHead {
  const { id, method } = fields;
  if (id === undefined) return { kind: "unknown" };
  if (fields.hasMethod) return { kind: "request", id, method };
  if (fields.hasResult || fields.hasError) return { kind: "response", id };
  return { kind: "unknown" };
}

/** What a whole line shows, read up to where it stops being JSON. */
export function readMessageHead(text: string): MessageHead {
  const reader = new TopLevelFieldReader();
  reader.feed(text);
  reader.end();
  return messageHead(reader.fields());
}
