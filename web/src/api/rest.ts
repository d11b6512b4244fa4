import { authHeaders } from "../auth/token.js";
import { everySession } from "../../../src/protocol/session-pages.js";
import { ApiError } from "./api-error.js";
import type {
  AgentLogin,
  AgentLogins,
  AgentSessionState,
  AgentsList,
  CatalogueView,
  ChangedFileView,
  DeviceLogin,
  LocationView,
  NewReviewComment,
  QuestionAnswer,
  QuestionView,
  ReadEvent,
  ReviewComment,
  SessionChanges,
  SessionView,
  StampedRecord,
  TerminalOutputResult,
  WorktreeStatusView,
} from "./types.js";

export { ApiError };

export function isUnauthorized(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}

async function request<T>(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", ...authHeaders() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  // Relative paths keep the dashboard working behind a reverse proxy that mounts Berth under a prefix.
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return undefined as T;
  const data: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data ?? {}) as { error?: unknown; message?: unknown };
    throw new ApiError(
      response.status,
      typeof error.error === "string" ? error.error : `http_${response.status}`,
      typeof error.message === "string" ? error.message : `${method} ${path} failed with HTTP ${response.status}`,
      error as Record<string, unknown>,
    );
  }
  return data as T;
}

const id = encodeURIComponent;

export const api = {
  agents: () => request<AgentsList>("GET", "api/agents"),
  catalogue: () => request<CatalogueView>("GET", "api/agents/catalogue"),
  startInstall: (body: { id: string; mode: "add" | "upgrade" }) => request<{ id: string }>("POST", "api/agents/installs", body),
  removeAgent: (agentId: string) => request<void>("DELETE", `api/agents/${id(agentId)}`),
  /** Every session, a page at a time. */
  sessions: () => everySession("api/sessions", (path) => request<{ sessions: SessionView[]; nextCursor?: string }>("GET", path)),
  session: (sessionId: string) => request<SessionView>("GET", `api/sessions/${id(sessionId)}`),
  agentState: (sessionId: string) => request<AgentSessionState>("GET", `api/sessions/${id(sessionId)}/agent-state`),
  /** A page of the journal, chunks of one message merged by Berth; `more`: the journal goes on after it. */
  events: (sessionId: string, after: number, limit: number) =>
    request<{ events: ReadEvent[]; more: boolean }>("GET", `api/sessions/${id(sessionId)}/events?after=${after}&limit=${limit}&merge=chunks`),
  /** A command's output as Berth keeps it while it runs; read without holding the session. */
  terminal: (sessionId: string, terminalId: string) =>
    request<TerminalOutputResult>("GET", `api/sessions/${id(sessionId)}/terminals/${id(terminalId)}`),
  renameSession: (sessionId: string, title: string | null) => request<SessionView>("PATCH", `api/sessions/${id(sessionId)}`, { title }),
  deleteSession: (sessionId: string) => request<void>("DELETE", `api/sessions/${id(sessionId)}`),
  locations: () => request<{ locations: LocationView[] }>("GET", "api/locations").then((r) => r.locations),
  questions: () => request<{ questions: QuestionView[] }>("GET", "api/questions").then((r) => r.questions),
  answerQuestion: (questionId: string, answer: QuestionAnswer) => request<QuestionView>("POST", `api/questions/${id(questionId)}/answer`, answer),
  logins: () => request<{ logins: DeviceLogin[] }>("GET", "api/logins").then((r) => r.logins),
  rememberDevice: () => request<{ login: DeviceLogin; pageSecret: string }>("POST", "api/logins", {}),
  forgetDevice: (loginId: string) => request<void>("DELETE", `api/logins/${id(loginId)}`),
  /** An agent's auth methods and its logins running or lately ended. */
  agentLogins: (agentId: string) => request<AgentLogins>("GET", `api/agents/${id(agentId)}/logins`),
  /** Answered once the agent opened an address to log in at, or the login ended; `env`: an environment-variable method's values. */
  startAgentLogin: (agentId: string, methodId: string, env?: Record<string, string>) =>
    request<AgentLogin>("POST", `api/agents/${id(agentId)}/logins`, { methodId, ...(env ? { env } : {}) }),
  /** The address the browser ended on, for the agent's callback on the host. */
  deliverLoginCallback: (agentId: string, loginId: string, address: string) =>
    request<AgentLogin>("POST", `api/agents/${id(agentId)}/logins/${id(loginId)}/callback`, { address }),
  /** What the session changed against its base; refused (`not_a_git_repository`) for a directory git does not know. */
  changes: (sessionId: string) => request<SessionChanges>("GET", `api/sessions/${id(sessionId)}/changes`),
  changedFile: (sessionId: string, path: string) => request<ChangedFileView>("GET", `api/sessions/${id(sessionId)}/changes/file?path=${id(path)}`),
  comments: (sessionId: string) => request<{ comments: ReviewComment[] }>("GET", `api/sessions/${id(sessionId)}/comments`).then((r) => r.comments),
  addComment: (sessionId: string, comment: NewReviewComment) => request<ReviewComment>("POST", `api/sessions/${id(sessionId)}/comments`, comment),
  editComment: (sessionId: string, commentId: string, body: string) =>
    request<ReviewComment>("PATCH", `api/sessions/${id(sessionId)}/comments/${id(commentId)}`, { body }),
  deleteComment: (sessionId: string, commentId: string) => request<void>("DELETE", `api/sessions/${id(sessionId)}/comments/${id(commentId)}`),
  /** Every unsent comment to the agent, as one prompt; they are then marked sent. */
  sendComments: (sessionId: string) => request<{ comments: ReviewComment[] }>("POST", `api/sessions/${id(sessionId)}/comments/send`, {}),
  land: (sessionId: string, message: string) => request<SessionView>("POST", `api/sessions/${id(sessionId)}/land`, { message }),
  worktreeStatus: (sessionId: string) => request<WorktreeStatusView>("GET", `api/sessions/${id(sessionId)}/worktree`),
  discard: (sessionId: string) => request<SessionView>("POST", `api/sessions/${id(sessionId)}/discard`, {}),
  records: (limit: number) => request<{ records: StampedRecord[] }>("GET", `api/records?limit=${limit}`).then((r) => r.records),
};
