import { ticketUrl } from "../auth/token.js";
import type { SessionView, StampedRecord } from "../api/types.js";

export interface EventStreamHandlers {
  /** Connected: time to resynchronise. */
  readonly opened: () => void;
  readonly record: (record: StampedRecord) => void;
  readonly session: (session: SessionView) => void;
  readonly sessionDeleted: (sessionId: string) => void;
  /** A session's agent state (mode, model, options, commands) changed. */
  readonly agentState: (sessionId: string) => void;
  /** Lost, refused (e.g. 401) or never opened: the caller finds out why and opens a new one. */
  readonly closed: () => void;
}

/** `GET /api/events` (Server-Sent Events): lifecycle records and session changes, live. */
export function openEventStream(handlers: EventStreamHandlers): () => void {
  let source: EventSource | undefined;
  let stopped = false;
  ticketUrl("api/events").then(
    (url) => {
      if (stopped) return;
      const opened = new EventSource(url);
      source = opened;
      const on = <T>(type: string, handle: (data: T) => void): void =>
        opened.addEventListener(type, (event) => handle(JSON.parse((event as MessageEvent<string>).data) as T));
      opened.addEventListener("open", handlers.opened);
      on<StampedRecord>("record", handlers.record);
      on<SessionView>("session", handlers.session);
      on<{ id: string }>("session_deleted", ({ id }) => handlers.sessionDeleted(id));
      on<{ id: string }>("agent_state", ({ id }) => handlers.agentState(id));
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
