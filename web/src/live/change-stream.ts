import type { SessionChanges } from "../api/types.js";
import { openTicketedStream } from "./ticketed-stream.js";

export interface ChangeStreamHandlers {
  /** The session's changes: as they are on attaching, then each time they differ after its agent worked. */
  readonly changes: (changes: SessionChanges) => void;
  /** They cannot be read any more (the directory was removed); the stream stays open. */
  readonly unreadable: (message: string) => void;
  /** Lost, refused or never opened: the caller finds out why and opens a new one. */
  readonly closed: () => void;
}

/** `GET /api/sessions/:id/changes/events` (Server-Sent Events): a session's changes, live. */
export function openChangeStream(sessionId: string, handlers: ChangeStreamHandlers): () => void {
  return openTicketedStream(`api/sessions/${encodeURIComponent(sessionId)}/changes/events`, {
    closed: handlers.closed,
    listen: (on) => {
      on<SessionChanges>("changes", handlers.changes);
      on<{ message: string }>("changes_error", ({ message }) => handlers.unreadable(message));
    },
  });
}
