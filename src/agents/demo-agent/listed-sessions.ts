import { RequestError, type ListSessionsResponse } from "@agentclientprotocol/sdk";
import type { ConversationStore } from "./conversation-store.js";

/**
 * How `session/list` answers: `serve` the stored conversations, `paged` them one a page (a `nextCursor` to each next),
 * `fail` with an internal error, or `hang` (never answer).
 */
export const listSessionsModes = ["serve", "paged", "fail", "hang"] as const;
export type ListSessions = (typeof listSessionsModes)[number];

const TITLE_LENGTH = 60;

/** Every conversation kept in the state dir (of `cwd`, if given), newest first, titled by its first prompt. */
export function listedSessions(
  store: ConversationStore,
  request: { readonly cwd?: string | null; readonly cursor?: string | null },
  how: ListSessions,
): Promise<ListSessionsResponse> {
  const { cwd } = request;
  if (how === "fail") return Promise.reject(RequestError.internalError(undefined, "the demo agent was told to fail session/list"));
  if (how === "hang") return new Promise<never>(() => undefined);
  const sessions = store
    .list()
    .filter(({ conversation }) => cwd == null || conversation.cwd === cwd)
    .map(({ conversation, updatedAt }) => {
      const prompt = conversation.entries.find((entry) => entry.kind === "user_message");
      return {
        sessionId: conversation.sessionId,
        cwd: conversation.cwd,
        title: prompt ? prompt.text.split("\n")[0]!.slice(0, TITLE_LENGTH) : null,
        updatedAt: updatedAt.toISOString(),
      };
    });
  if (how === "serve") return Promise.resolve({ sessions });
  // The cursor is the index of the page's one session.
  const at = request.cursor == null ? 0 : Number(request.cursor);
  if (!Number.isSafeInteger(at) || at < 0 || at >= sessions.length)
    return Promise.reject(RequestError.invalidParams(undefined, `cursor ${JSON.stringify(request.cursor)} is not a page of this list`));
  return Promise.resolve({ sessions: sessions.slice(at, at + 1), ...(at + 1 < sessions.length ? { nextCursor: String(at + 1) } : {}) });
}
