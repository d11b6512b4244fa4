import type { ServerResponse } from "node:http";
import type { ChangeSet } from "../host/views.js";
import { EventStreams, sseFrame } from "./event-streams.js";

/** Work reported within this of the last is read once (an agent's burst of edits is one read of git, not twenty). */
const CHANGES_DEBOUNCE_MS = 250;

interface Watched {
  readonly streams: EventStreams;
  /** What the streams were last told, to tell them only of a change. */
  last: string;
  timer: NodeJS.Timeout | undefined;
  /** `idle` → `reading` (git runs) → `reading-again` (work reported meanwhile: one more read follows). */
  state: "idle" | "reading" | "reading-again";
}

export interface ChangeStreamsDeps {
  readonly read: (sessionId: string) => Promise<ChangeSet>;
  /** Told the session's id when its agent may have changed files; returns the way to stop. */
  readonly onWorkDone: (listener: (sessionId: string) => void) => () => void;
  readonly keepAliveMs?: number;
  readonly debounceMs?: number;
}

/**
 * `GET /api/sessions/:id/changes/events`: a session's changes, sent as a `changes` event when a
 * client attaches and each time they differ after its agent worked (docs/review.md). Only
 * sessions with an open stream are read, and only when their agent reported work: nothing polls.
 */
export class ChangeStreams {
  private readonly watched = new Map<string, Watched>();
  private readonly stop: () => void;

  constructor(private readonly deps: ChangeStreamsDeps) {
    this.stop = deps.onWorkDone((sessionId) => this.workDone(sessionId));
  }

  /** Starts the stream with the changes as they are now (read before: a directory outside git is refused, not streamed). */
  attach(sessionId: string, first: ChangeSet, res: ServerResponse): void {
    let watched = this.watched.get(sessionId);
    if (!watched) {
      watched = { streams: new EventStreams(this.deps.keepAliveMs ?? 15_000, 0), last: JSON.stringify(first), timer: undefined, state: "idle" };
      this.watched.set(sessionId, watched);
    }
    watched.streams.attach(res, sseFrame("changes", first));
    res.on("close", () => {
      if (watched.streams.size > 0 || this.watched.get(sessionId) !== watched) return;
      clearTimeout(watched.timer);
      watched.streams.close();
      this.watched.delete(sessionId);
    });
  }

  /** Ends every open stream (a rotated token); new ones are served, and checked again. */
  endStreams(): void {
    for (const watched of this.watched.values()) {
      clearTimeout(watched.timer);
      watched.streams.close();
    }
    this.watched.clear();
  }

  close(): void {
    this.stop();
    this.endStreams();
  }

  private workDone(sessionId: string): void {
    const watched = this.watched.get(sessionId);
    if (!watched) return;
    if (watched.state !== "idle") {
      watched.state = "reading-again";
      return;
    }
    clearTimeout(watched.timer);
    watched.timer = setTimeout(() => void this.read(sessionId, watched), this.deps.debounceMs ?? CHANGES_DEBOUNCE_MS);
  }

  private async read(sessionId: string, watched: Watched): Promise<void> {
    watched.state = "reading";
    try {
      const changes = await this.deps.read(sessionId);
      const text = JSON.stringify(changes);
      if (text !== watched.last) {
        watched.last = text;
        watched.streams.broadcast("changes", changes);
      }
    } catch (error) {
      // The directory went away or stopped being a repository: the clients are told, and stay attached.
      watched.streams.broadcast("changes_error", { message: error instanceof Error ? error.message : String(error) });
    }
    // Set meanwhile by workDone (the compiler cannot see past the await).
    const again = (watched.state as Watched["state"]) === "reading-again";
    watched.state = "idle";
    if (again && this.watched.get(sessionId) === watched) this.workDone(sessionId);
  }
}
