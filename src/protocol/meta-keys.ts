// Every `_meta` key Berth defines in ACP, in one place: the host, its edges and the dashboard (web/) import them from
// here, so a key is spelled once. Free of Node imports, as everything web/ imports must be.

/** `session/new`: the agent to start (else the connection's); on a `session/list` entry, the session's agent. */
export const AGENT_META = "berth/agent";
/** `session/new`: the workspace of the new session; on a `session/list` entry, the session's workspace. */
export const WORKSPACE_META = "berth/workspace";
/** `session/new`: a git worktree of its own for the new session (docs/worktrees.md). */
export const WORKTREE_META = "berth/worktree";
/** `session/new`: the session's sandbox, `{ mode, network? }` (docs/sandbox.md). */
export const SANDBOX_META = "berth/sandbox";
/** `session/new`: the new session's title, as `POST /api/sessions` `title` (a worktree's branch is named after it). */
export const TITLE_META = "berth/title";
/** `session/new`: the fleet host to place the new session on (docs/fleet.md). */
export const PLACEMENT_META = "berth/placement";
/**
 * `initialize` answer: what Berth adds, `{ name, version, agentUnavailable? }`. Until 0.3.0 also read in `session/new`
 * as the placement's old, deprecated key ({@link PLACEMENT_META} took its place: one key, one meaning).
 */
export const HOST_META = "berth/host";
/** `session/list` entry: the agent's own session, unknown to Berth until a `session/load` imports it. */
export const NATIVE_META = "berth/native";
/**
 * `authenticate`: the values of an environment-variable auth method's variables (`{ "OPENAI_API_KEY": "sk-…" }`);
 * Berth starts every child of that agent with them set. Not passed on to the agent.
 */
export const LOGIN_ENV_META = "berth/env";
/** A `session/update` the journal recorded: its journal seq (on a merged chunk, the last one's). */
export const SEQ_META = "berth/seq";
/** A chunk merged from several journaled chunks: the first one's seq. */
export const SEQ_FROM_META = "berth/seqFrom";
/** `initialize` client capabilities: the client wants each journaled update's seq ({@link SEQ_META}) and no echo of its own prompts. */
export const JOURNAL_SEQ_META = "berth/journalSeq";
/** A text chunk that is Berth's own notice in the transcript (an interrupted turn, a question answered elsewhere). */
export const NOTICE_META = "berth/notice";
/**
 * `initialize` client capabilities: the client takes `terminal` content as the agent sent it, not mirrored as text;
 * on mirrored text content, the terminal it stands for (`{ terminalId }`).
 */
export const RAW_TERMINALS_META = "berth/rawTerminals";
