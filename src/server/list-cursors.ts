import { z } from "zod";
import type { SessionKey } from "../host/views.js";
import { MAX_ID_LENGTH } from "../protocol/id-limits.js";

/** Sessions on a page of a list when the client does not say (REST `limit`), and on every ACP `session/list` page. */
export const SESSION_PAGE = 100;
/** The most a REST client may ask for on one page. */
export const MAX_SESSION_PAGE = 1_000;

/**
 * Where a session list goes on: after one of Berth's sessions, or (ACP `session/list` only) on the agent's own
 * sessions at the agent's cursor. Clients get it as an opaque token and hand it back as it was.
 */
export type ListCursor = { readonly after: SessionKey } | { readonly agentCursor: string };

/**
 * A time of a session's place as this host encodes it: whole milliseconds up to 2^53 - 1 (Zod's `int` is a safe
 * integer), which PostgreSQL's bigint holds; never a -0, which no cursor of this host carries.
 */
const placeTime = z
  .number()
  .int()
  .nonnegative()
  .refine((time) => !Object.is(time, -0));
/** A session id as one can be: no longer than ACP's id limit, no NUL (PostgreSQL's text refuses it). */
const placeId = z
  .string()
  .min(1)
  .max(MAX_ID_LENGTH)
  .refine((id) => !id.includes("\0"));

const token = z.union([
  z.object({ after: z.tuple([placeTime, placeTime, placeId]) }).strict(),
  z.object({ agentCursor: z.string().min(1) }).strict(),
]);

/** A cursor that is not one this host gave out (or was changed): `-32602` over ACP, 400 over REST. */
class InvalidCursorError extends Error {
  override readonly name = "InvalidCursorError";
}

export function encodeCursor(cursor: ListCursor): string {
  const body = "after" in cursor ? { after: [cursor.after.updatedAt, cursor.after.createdAt, cursor.after.id] } : cursor;
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

export function decodeCursor(text: string): ListCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const checked = token.safeParse(parsed);
  if (!checked.success)
    throw new InvalidCursorError(`cursor ${JSON.stringify(text)} is not a cursor this host gave out: pass a nextCursor back as it was`);
  if ("agentCursor" in checked.data) return checked.data;
  const [updatedAt, createdAt, id] = checked.data.after;
  return { after: { updatedAt, createdAt, id } };
}
