import { useEffect, useState } from "preact/hooks";
import { api } from "../api/rest.js";
import type { SessionView, WorktreeStatusView } from "../api/types.js";

/** The base moves in the main checkout without telling Berth: an active worktree session's counts are read again this often. */
const READ_AGAIN_MS = 10_000;

/**
 * An active worktree session's ahead/behind and ready to review (`GET /api/sessions/:id/worktree`), read when it
 * shows, again whenever the session moves (a turn starts or ends, a question comes) and every 10 s; null for any
 * other session, and until the first answer.
 */
export function useWorktreeStatus(session: SessionView): WorktreeStatusView | null {
  const active = session.worktree?.state === "active";
  const [status, setStatus] = useState<WorktreeStatusView | null>(null);
  const moved = `${session.updatedAt}:${session.turnActive}:${session.pendingQuestions}:${session.lastTurn?.at ?? 0}`;
  useEffect(() => {
    if (!active) {
      setStatus(null);
      return;
    }
    let shown = true;
    // A failed read keeps the last counts: the chip falls back to what the agent is doing.
    const read = () =>
      api.worktreeStatus(session.id).then(
        (next) => shown && setStatus(next),
        () => undefined,
      );
    void read();
    const timer = setInterval(read, READ_AGAIN_MS);
    return () => {
      shown = false;
      clearInterval(timer);
    };
  }, [session.id, active, moved]);
  return status;
}
