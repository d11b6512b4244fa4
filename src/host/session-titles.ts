import type { SessionUpdate } from "@agentclientprotocol/sdk";

/** A title a person gave that cannot be one (not a string, empty, too long). */
export class InvalidTitleError extends Error {
  override readonly name = "InvalidTitleError";
}

const MAX_TITLE_LENGTH = 200;

/**
 * The title as stored: one line (runs of white space, line breaks included, become one space),
 * trimmed, 1 to 200 characters; null clears it (the next prompt titles the session again).
 */
export function normalTitle(title: unknown): string | null {
  if (title === null) return null;
  if (typeof title !== "string")
    throw new InvalidTitleError(`a title must be a string or null, got ${title === undefined ? "nothing" : typeof title}`);
  const line = title.replace(/\s+/gu, " ").trim();
  if (line === "") throw new InvalidTitleError("a title must not be empty (send null to clear it)");
  if ([...line].length > MAX_TITLE_LENGTH)
    throw new InvalidTitleError(`a title must be at most ${MAX_TITLE_LENGTH} characters, got ${[...line].length}`);
  return line;
}

/** What every client holding the session is told, and what a replay tells again: ACP's own title update. */
export function titleUpdate(title: string | null): SessionUpdate {
  return { sessionUpdate: "session_info_update", title };
}
