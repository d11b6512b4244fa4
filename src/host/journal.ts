import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Clock } from "../lifecycle/clock.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import type { SessionBus } from "./session-bus.js";

/** The kinds of durable events in a session's journal. */
export type JournalKind =
  | "turn_started"
  | "update"
  | "turn_ended"
  | "question_asked"
  | "question_resolved"
  | "interrupted"
  | "agent_exited";

/**
 * Records durable events: appended to the session's journal, counted as progress for its
 * location, and (for updates) streamed to its subscribers. A failed write is logged and the
 * live stream carries on; what is stored stays intact.
 */
export class Journal {
  constructor(
    private readonly store: Store,
    private readonly bus: SessionBus,
    private readonly touchLocation: (key: LocationKey) => void,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  append(sessionId: string, key: LocationKey, kind: JournalKind, payload: unknown): number {
    let seq = 0;
    try {
      seq = this.store.events.append(sessionId, kind, payload, this.clock.now());
    } catch (error) {
      this.log.error({ sessionId, kind, err: error }, "journal write failed");
    }
    this.touchLocation(key);
    return seq;
  }

  update(sessionId: string, key: LocationKey, update: SessionUpdate): number {
    const seq = this.append(sessionId, key, "update", { update });
    this.bus.publish(sessionId, { type: "update", seq, notification: { sessionId, update } });
    return seq;
  }

  /** A notice from Berth itself in the session's transcript (interruptions, crashes), so every client sees it. */
  notice(sessionId: string, key: LocationKey, text: string, meta: Record<string, unknown>): number {
    return this.update(sessionId, key, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text },
      _meta: { "berth/notice": meta },
    });
  }
}
