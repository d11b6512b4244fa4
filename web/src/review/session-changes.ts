import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api/rest.js";
import type { SessionChanges } from "../api/types.js";
import { openChangeStream } from "../live/change-stream.js";
import { attemptStarted, connected, lostConnection, type Reconnection } from "../live/reconnection.js";
import { errorWords } from "../util/error-words.js";

/** A session's changes as the page knows them. */
export type ChangesState =
  | { readonly name: "loading" }
  | { readonly name: "loaded"; readonly changes: SessionChanges }
  /** The session's directory is not in a git repository: there is nothing to compare with. */
  | { readonly name: "not-a-repository"; readonly message: string }
  | { readonly name: "failed"; readonly message: string };

export interface SessionChangesState {
  readonly changes: ChangesState;
  /** Bumped with each change streamed: what shows a file reads it again. */
  readonly revision: number;
}

/**
 * A session's changes, live: the host's stream of them, opened again with the chat's backoff when it is lost; a
 * stream refused is asked why (a directory outside git is not streamed). `enabled` false opens nothing (a worktree
 * landed or discarded is gone).
 */
export function useSessionChanges(sessionId: string, enabled = true): SessionChangesState {
  const [changes, setChanges] = useState<ChangesState>({ name: "loading" });
  const [revision, setRevision] = useState(0);

  useEffect(() => {
    if (!enabled) return;
    setChanges({ name: "loading" });
    let close: (() => void) | undefined;
    let retry: number | undefined;
    let reconnection: Reconnection = connected;
    let stopped = false;
    const open = (): void => {
      close = openChangeStream(sessionId, {
        changes: (value) => {
          reconnection = connected;
          setChanges({ name: "loaded", changes: value });
          setRevision((n) => n + 1);
        },
        unreadable: (message) => setChanges({ name: "failed", message }),
        closed: () => void refused(),
      });
    };
    const refused = async (): Promise<void> => {
      close?.();
      try {
        // Shown meanwhile: the stream, once open again, tells of what changes after.
        const value = await api.changes(sessionId);
        if (!stopped) setChanges({ name: "loaded", changes: value });
      } catch (error) {
        if (stopped) return;
        if (error instanceof ApiError && error.code === "not_a_git_repository")
          return setChanges({ name: "not-a-repository", message: errorWords(error) });
        if (error instanceof ApiError && error.status < 500) return setChanges({ name: "failed", message: errorWords(error) });
      }
      if (stopped) return;
      reconnection = lostConnection(reconnection, "the changes' stream closed", Date.now());
      const due = reconnection.retryAt;
      retry = window.setTimeout(() => {
        reconnection = attemptStarted(reconnection);
        open();
      }, due - Date.now());
    };
    open();
    return () => {
      stopped = true;
      window.clearTimeout(retry);
      close?.();
    };
  }, [sessionId, enabled]);

  return { changes, revision };
}
