import { ticketUrl } from "../auth/token.js";
import type { SessionChanges } from "../api/types.js";

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
  let source: EventSource | undefined;
  let stopped = false;
  ticketUrl(`api/sessions/${encodeURIComponent(sessionId)}/changes/events`).then(
    (url) => {
      if (stopped) return;
      const opened = new EventSource(url);
      source = opened;
      opened.addEventListener("changes", (event) => handlers.changes(JSON.parse((event as MessageEvent<string>).data) as SessionChanges));
      opened.addEventListener("changes_error", (event) =>
        handlers.unreadable((JSON.parse((event as MessageEvent<string>).data) as { message: string }).message),
      );
      // The ticket opened one connection: the browser's own retry would present it again and be refused.
      opened.addEventListener("error", () => {
        opened.close();
        handlers.closed();
      });
    },
    () => {
      if (!stopped) handlers.closed();
    },
  );
  return () => {
    stopped = true;
    source?.close();
  };
}
