import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/rest.js";
import type { NewReviewComment, ReviewComment } from "../api/types.js";
import { type ChangesState, useSessionChanges } from "./session-changes.js";

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
 * A session's changes and review comments: comments are read on opening and with each change streamed (another page
 * may have commented meanwhile), and applied from the host's answers to what this page does.
 */
export function useSessionReview(sessionId: string, enabled: boolean): SessionReview {
  const { changes, revision } = useSessionChanges(sessionId, enabled);
  const [comments, setComments] = useState<readonly ReviewComment[] | null>(null);
  // A read's list is applied only if no later read was asked and this page changed no comment while it was read (an
  // add answered meanwhile would vanish, a delete come back): then it is read again.
  const readsAsked = useRef(0);
  const ownChanges = useRef(0);
  const applyChange = (change: (all: readonly ReviewComment[]) => readonly ReviewComment[]): void => {
    ownChanges.current++;
    setComments((all) => change(all ?? []));
  };

  const readComments = useCallback(async (): Promise<void> => {
    for (;;) {
      const asked = ++readsAsked.current;
      const changesBefore = ownChanges.current;
      const read = await api.comments(sessionId);
      if (asked !== readsAsked.current) return;
      if (changesBefore === ownChanges.current) return setComments(read);
    }
  }, [sessionId]);

  useEffect(() => {
    readComments().catch(() => setComments((known) => known ?? []));
  }, [readComments, revision]);

  return {
    changes,
    comments,
    revision,
    addComment: async (comment) => {
      const added = await api.addComment(sessionId, comment);
      applyChange((all) => [...all.filter((c) => c.id !== added.id), added]);
    },
    editComment: async (commentId, body) => {
      const edited = await api.editComment(sessionId, commentId, body);
      applyChange((all) => all.map((c) => (c.id === edited.id ? edited : c)));
    },
    deleteComment: async (commentId) => {
      await api.deleteComment(sessionId, commentId);
      applyChange((all) => all.filter((c) => c.id !== commentId));
    },
    sendComments: async () => {
      await api.sendComments(sessionId);
      await readComments();
    },
  };
}
