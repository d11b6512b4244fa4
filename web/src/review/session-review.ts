import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/rest.js";
import type { NewReviewComment, ReviewComment, SessionChanges } from "../api/types.js";
import { errorWords } from "../util/error-words.js";

/** A session's changes as the view knows them. */
export type ChangesState =
  | { readonly name: "loading" }
  | { readonly name: "loaded"; readonly changes: SessionChanges }
  /** The session's directory is not in a git repository: there is nothing to compare with. */
  | { readonly name: "not-a-repository"; readonly message: string }
  | { readonly name: "failed"; readonly message: string };

export interface SessionReview {
  readonly changes: ChangesState;
  /** Every comment of the session, sent or not; null until first read. */
  readonly comments: readonly ReviewComment[] | null;
  /** Bumped on each change of the session's files: an open file reads itself again. */
  readonly revision: number;
  readonly addComment: (comment: NewReviewComment) => Promise<void>;
  readonly editComment: (commentId: string, body: string) => Promise<void>;
  readonly deleteComment: (commentId: string) => Promise<void>;
  /** Every unsent comment to the agent as one prompt. */
  readonly sendComments: () => Promise<void>;
}

/**
 * A session's changes and review comments, read on opening and again whenever `subscribe` says the session's
 * files changed (the event stream); comments made here are applied from the host's answers.
 */
export function useSessionReview(sessionId: string, subscribe: (changed: (sessionId: string | null) => void) => () => void): SessionReview {
  const [changes, setChanges] = useState<ChangesState>({ name: "loading" });
  const [comments, setComments] = useState<readonly ReviewComment[] | null>(null);
  const [revision, setRevision] = useState(0);
  // One read at a time; a change told meanwhile reads again after it, so the last change is never missed.
  const reading = useRef<"idle" | "reading" | "read-again">("idle");

  const readChanges = useCallback((): void => {
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
        if (again) readChanges();
      });
    setRevision((n) => n + 1);
  }, [sessionId]);

  const readComments = useCallback(async (): Promise<void> => {
    setComments(await api.comments(sessionId));
  }, [sessionId]);

  useEffect(() => {
    setChanges({ name: "loading" });
    setComments(null);
    readChanges();
    readComments().catch(() => setComments([]));
    // null: the stream opened again, anything may have changed meanwhile.
    return subscribe((changed) => {
      if (changed === null || changed === sessionId) {
        readChanges();
        readComments().catch(() => undefined);
      }
    });
  }, [sessionId, subscribe, readChanges, readComments]);

  return {
    changes,
    comments,
    revision,
    addComment: async (comment) => {
      const added = await api.addComment(sessionId, comment);
      setComments((all) => [...(all ?? []).filter((c) => c.id !== added.id), added]);
    },
    editComment: async (commentId, body) => {
      const edited = await api.editComment(sessionId, commentId, body);
      setComments((all) => (all ?? []).map((c) => (c.id === edited.id ? edited : c)));
    },
    deleteComment: async (commentId) => {
      await api.deleteComment(sessionId, commentId);
      setComments((all) => (all ?? []).filter((c) => c.id !== commentId));
    },
    sendComments: async () => {
      await api.sendComments(sessionId);
      await readComments();
    },
  };
}
