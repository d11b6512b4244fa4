import type { SessionView, StampedRecord } from "../api/types.js";
import { openTicketedStream } from "./ticketed-stream.js";

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
  return openTicketedStream("api/events", {
    opened: handlers.opened,
    closed: handlers.closed,
    listen: (on) => {
      on<StampedRecord>("record", handlers.record);
      on<SessionView>("session", handlers.session);
      on<{ id: string }>("session_deleted", ({ id }) => handlers.sessionDeleted(id));
      on<{ id: string }>("agent_state", ({ id }) => handlers.agentState(id));
    },
  });
}
