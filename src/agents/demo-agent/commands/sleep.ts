import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/**
 * `/sleep <duration>`: announces the wait (so a client knows the turn is under
 * way), then waits, ending early with `cancelled` if the turn is cancelled, unless told to ignore it.
 */
export async function sleep(turn: Turn, durationMs: number, spelled: string, ignoreCancel: boolean): Promise<StopReason> {
  await turn.say(`Sleeping for ${spelled}.`);
  const outcome = await wait(durationMs, ignoreCancel ? new AbortController().signal : turn.cancelled);
  if (outcome === "cancelled") return "cancelled";
  await turn.say(`Slept for ${spelled}.`);
  return "end_turn";
}

function wait(ms: number, cancelled: AbortSignal): Promise<"elapsed" | "cancelled"> {
  return new Promise((resolve) => {
    if (cancelled.aborted) return resolve("cancelled");
    const onCancel = (): void => {
      clearTimeout(timer);
      resolve("cancelled");
    };
    const timer = setTimeout(() => {
      cancelled.removeEventListener("abort", onCancel);
      resolve("elapsed");
    }, ms);
    cancelled.addEventListener("abort", onCancel, { once: true });
  });
}
