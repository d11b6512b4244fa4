import type { HttpError } from "./http-io.js";

/** How a request that threw is logged, if at all. */
export type RequestFailureLine =
  | { readonly level: "warn"; readonly msg: "request refused: the store cannot write" }
  | { readonly level: "error"; readonly msg: "request failed" };

/**
 * The store's outage is announced once (`store cannot write`): each request it turns away (a write not taken within
 * `writeTimeout`, an adoption while cut off) is a warning. A `store_unavailable` that wraps a cause of its own (an
 * adoption the database or the mirror refused) failed, as does any other 5xx, except a refusal while the host stops
 * (`shutting_down`: nothing failed).
 */
export function requestFailureLine(error: unknown, httpError: HttpError): RequestFailureLine | undefined {
  const wrapsCause = error instanceof Error && error.cause !== undefined;
  if (httpError.code === "store_unavailable" && !wrapsCause) return { level: "warn", msg: "request refused: the store cannot write" };
  if (httpError.status >= 500 && httpError.code !== "shutting_down") return { level: "error", msg: "request failed" };
  return undefined;
}
