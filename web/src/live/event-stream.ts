import { authorizedUrl } from "../auth/token.js";
import type { SessionView, StampedRecord } from "../api/types.js";

export interface EventStreamHandlers {
  /** Connected (also after the browser reconnected by itself): time to resynchronise. */
  readonly opened: () => void;
  readonly record: (record: StampedRecord) => void;
  readonly session: (session: SessionView) => void;
  readonly sessionDeleted: (sessionId: string) => void;
  /** Lost; the browser retries by itself. */
  readonly retrying: () => void;
  /** Refused (e.g. 401) or otherwise given up: the browser will not retry. */
  readonly closed: () => void;
}

/** `GET /api/events` (Server-Sent Events): lifecycle records and session changes, live. */
export function openEventStream(handlers: EventStreamHandlers): () => void {
  const source = new EventSource(authorizedUrl("api/events"));
  const on = <T>(type: string, handle: (data: T) => void): void =>
    source.addEventListener(type, (event) => handle(JSON.parse((event as MessageEvent<string>).data) as T));
  source.addEventListener("open", handlers.opened);
  on<StampedRecord>("record", handlers.record);
  on<SessionView>("session", handlers.session);
  on<{ id: string }>("session_deleted", ({ id }) => handlers.sessionDeleted(id));
  source.addEventListener("error", () => (source.readyState === EventSource.CLOSED ? handlers.closed() : handlers.retrying()));
  return () => source.close();
}
