import type { ContentBlock, PromptResponse } from "@agentclientprotocol/sdk";
import { reviewPrompt } from "../changes/review-prompt.js";
import { TurnAlreadyRunningError } from "../lifecycle/executions.js";
import type { ReviewComment } from "../store/review-comments.js";
import type { Logger } from "./logger.js";
import type { ReviewDesk } from "./review-desk.js";
import type { SessionListener } from "./session-bus.js";

export interface ReviewSendDeps {
  readonly desk: ReviewDesk;
  readonly log: Logger;
  readonly turnActive: (sessionId: string) => boolean;
  readonly subscribe: (sessionId: string, listener: SessionListener) => () => void;
  /** The text prompt the journal's `turn_started` at `seq` carries (another client's turn may start first). */
  readonly promptAt: (sessionId: string, seq: number) => string | undefined;
  /** The host's own prompt path, refusing to join a running turn: the turn is journaled and every client of the session sees it. */
  readonly prompt: (sessionId: string, prompt: ContentBlock[]) => Promise<PromptResponse>;
}

/**
 * Sends every unsent comment of the session to its agent as one prompt, and marks them sent once
 * the turn has started (not when it ends: a real agent's turn may take an hour). A session
 * already running a turn is refused before anything is sent.
 */
export async function sendReviewComments(
  deps: ReviewSendDeps,
  sessionId: string,
  cwd: string,
): Promise<{ comments: ReviewComment[]; prompt: string }> {
  const unsent = deps.desk.unsentOf(sessionId);
  if (deps.turnActive(sessionId)) throw new TurnAlreadyRunningError(sessionId);
  const prompt = await reviewPrompt(cwd, unsent);
  let unsubscribe = () => {};
  const started = new Promise<void>((resolve, reject) => {
    unsubscribe = deps.subscribe(sessionId, (event) => {
      if (event.type === "turn_started" && deps.promptAt(sessionId, event.seq) === prompt) resolve();
    });
    const turn = deps.prompt(sessionId, [{ type: "text", text: prompt }]);
    // Failing before it started (the agent would not start, another turn won the race) refuses the send; later is the turn's own end.
    turn.catch((error: unknown) => {
      reject(error);
      deps.log.warn({ err: error, sessionId }, "the turn carrying review comments failed");
    });
  });
  try {
    await started;
  } finally {
    unsubscribe();
  }
  return { comments: await deps.desk.markSent(sessionId, unsent), prompt };
}
