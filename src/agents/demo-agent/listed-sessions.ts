import { RequestError, type ListSessionsResponse } from "@agentclientprotocol/sdk";
import type { ConversationStore } from "./conversation-store.js";

/** How `session/list` answers: `serve` the stored conversations, `fail` with an internal error, or `hang` (never answer). */
export const listSessionsModes = ["serve", "fail", "hang"] as const;
export type ListSessions = (typeof listSessionsModes)[number];

const TITLE_LENGTH = 60;

/** Every conversation kept in the state dir (of `cwd`, if given), newest first, titled by its first prompt. */
export function listedSessions(store: ConversationStore, cwd: string | undefined, how: ListSessions): Promise<ListSessionsResponse> {
  if (how === "fail") return Promise.reject(RequestError.internalError(undefined, "the demo agent was told to fail session/list"));
  if (how === "hang") return new Promise<never>(() => undefined);
  const sessions = store
    .list()
    .filter(({ conversation }) => cwd === undefined || conversation.cwd === cwd)
    .map(({ conversation, updatedAt }) => {
      const prompt = conversation.entries.find((entry) => entry.kind === "user_message");
      return {
        sessionId: conversation.sessionId,
        cwd: conversation.cwd,
        title: prompt ? prompt.text.split("\n")[0]!.slice(0, TITLE_LENGTH) : null,
        updatedAt: updatedAt.toISOString(),
      };
    });
  return Promise.resolve({ sessions });
}
