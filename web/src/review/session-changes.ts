import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/rest.js";
import type { SessionChanges } from "../api/types.js";
import { errorWords } from "../util/error-words.js";

/** A session's changes as the page knows them. */
export type ChangesState =
  | { readonly name: "loading" }
  | { readonly name: "loaded"; readonly changes: SessionChanges }
  /** The session's directory is not in a git repository: there is nothing to compare with. */
  | { readonly name: "not-a-repository"; readonly message: string }
  | { readonly name: "failed"; readonly message: string };

/** Tells of changes to a session's files (null: the event stream opened again, anything may have changed). */
export type ChangesSubscription = (changed: (sessionId: string | null) => void) => () => void;

export interface SessionChangesState {
  readonly changes: ChangesState;
  /** Bumped on each change told: what shows a file reads it again. */
  readonly revision: number;
}

/**
 * A session's changes, read on opening and again whenever `subscribe` tells of a change (the event stream);
 * `enabled` false reads nothing (a worktree landed or discarded is gone).
 */
export function useSessionChanges(sessionId: string, subscribe: ChangesSubscription, enabled = true): SessionChangesState {
  const [changes, setChanges] = useState<ChangesState>({ name: "loading" });
  const [revision, setRevision] = useState(0);
  // One read at a time; a change told meanwhile reads again after it, so the last change is never missed.
  const reading = useRef<"idle" | "reading" | "read-again">("idle");

  const read = useCallback((): void => {
    setRevision((n) => n + 1);
    if (reading.current !== "idle") {
      reading.current = "read-again";
      return;
    }
    reading.current = "reading";
    api
      .changes(sessionId)
      .then(
        (value) => setChanges({ name: "loaded", changes: value }),
        (error: unknown) =>
          setChanges(
            error instanceof ApiError && error.code === "not_a_git_repository"
              ? { name: "not-a-repository", message: errorWords(error) }
              : { name: "failed", message: errorWords(error) },
          ),
      )
      .finally(() => {
        const again = reading.current === "read-again";
        reading.current = "idle";
        if (again) read();
      });
  }, [sessionId]);

  useEffect(() => {
    if (!enabled) return;
    setChanges({ name: "loading" });
    read();
    return subscribe((changed) => {
      if (changed === null || changed === sessionId) read();
    });
  }, [sessionId, subscribe, read, enabled]);

  return { changes, revision };
}
