type Phase = "idle" | "running" | "rerun";

/**
 * Wraps a refetch so that a burst of triggers costs at most two runs: one now, and one more after it
 * if something asked again meanwhile (its answer then reflects everything that happened).
 */
export function coalesced(task: () => Promise<void>): () => void {
  let phase: Phase = "idle";
  const run = (): void => {
    phase = "running";
    void task().finally(() => {
      if (phase === "rerun") run();
      else phase = "idle";
    });
  };
  return () => {
    if (phase === "idle") run();
    else phase = "rerun";
  };
}
