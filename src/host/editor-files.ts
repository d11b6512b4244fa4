import {
  RequestError,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type WriteTextFileRequest,
  type WriteTextFileResponse,
} from "@agentclientprotocol/sdk";
import type { ClientFiles } from "../agents/agent-client-handlers.js";
import { formatDuration } from "../config/durations.js";
import type { Clock } from "../lifecycle/clock.js";
import type { HostRecord } from "./host-records.js";
import { METHOD_NOT_FOUND } from "../protocol/json-rpc-codes.js";

type FileRecord = Extract<HostRecord, { kind: "file_request" }>;
type FileMethod = FileRecord["method"];
/** Why the client gave no answer of its own. */
type Unanswered = "timeout" | "client_gone";

/** How the client's attempt ended: its answer, its own refusal (which the agent gets as it would directly), or none. */
type Attempt<T> =
  | { readonly state: "answered"; readonly answer: T }
  | { readonly state: "refused"; readonly error: RequestError }
  | { readonly state: "lacking" }
  | { readonly state: "unanswered"; readonly why: Unanswered };

/**
 * What an unanswered request gets. A read is answered from the disk so the agent keeps working; a write is not made:
 * the client may still be showing it to its user, whose rejection must not come after Berth has written it anyway.
 */
const WHEN_UNANSWERED: Readonly<Record<FileMethod, "disk" | "refuse">> = {
  "fs/read_text_file": "disk",
  "fs/write_text_file": "refuse",
};

/** The session's own file access on the host: its confinement of a path, and the disk's answer. */
export interface LocalFiles<T> {
  /**
   * Throws the refusal the disk would give for where the path leads (outside the session's directories); else
   * returns the real path checked, the only one a client is given.
   */
  readonly confine: () => Promise<string>;
  readonly disk: () => Promise<T>;
}

export interface EditorFilesDeps {
  readonly clock: Clock;
  readonly record: (record: HostRecord) => void;
  /** How long the client may take to answer before the disk does (`clientFileTimeout`). */
  readonly timeoutMs: number;
}

/**
 * Where an agent's `fs/*` requests are answered: by the client that sent the prompt the agent works on (the agent child
 * tells which, by the order on the wire) when it declared the capability (as it would be without Berth), else by the
 * disk of the session's location (Berth's own file access).
 * The disk also answers a read when that client is gone, lacks the method, or does not answer within the timeout, so
 * the agent keeps working; a write only when the client lacks the method (else the agent gets an error, nothing is
 * written). Every request put to a client is recorded (`file_request`) with who answered it.
 */
export class EditorFiles {
  constructor(private readonly deps: EditorFilesDeps) {}

  /** `files`: the prompting client's, if it gave any. */
  read(
    sessionId: string,
    files: ClientFiles | undefined,
    params: ReadTextFileRequest,
    local: LocalFiles<ReadTextFileResponse>,
  ): Promise<ReadTextFileResponse> {
    if (!files?.readTextFile) return local.disk();
    return this.served(sessionId, "fs/read_text_file", params.path, (path, signal) => files.read({ ...params, path }, signal), local);
  }

  write(
    sessionId: string,
    files: ClientFiles | undefined,
    params: WriteTextFileRequest,
    local: LocalFiles<WriteTextFileResponse>,
  ): Promise<WriteTextFileResponse> {
    if (!files?.writeTextFile) return local.disk();
    return this.served(sessionId, "fs/write_text_file", params.path, (path, signal) => files.write({ ...params, path }, signal), local);
  }

  private async served<T>(
    sessionId: string,
    method: FileMethod,
    path: string,
    ask: (real: string, signal: AbortSignal) => Promise<T>,
    { confine, disk }: LocalFiles<T>,
  ): Promise<T> {
    // The session's confinement (its directories, its sandbox's promise) holds whoever answers: the client is asked
    // for the real path checked, never the agent's, which its own resolution could lead outside.
    const real = await confine();
    const attempt = await this.attempt((signal) => ask(real, signal));
    const record = (by: FileRecord["by"], why?: FileRecord["why"]) =>
      this.deps.record({ kind: "file_request", sessionId, method, path, by, ...(why === undefined ? {} : { why }) });
    switch (attempt.state) {
      case "answered":
        record("client");
        return attempt.answer;
      case "refused":
        record("client");
        throw attempt.error;
      case "lacking":
        record("disk", "client_lacks");
        return disk();
      case "unanswered":
        if (WHEN_UNANSWERED[method] === "disk") {
          record("disk", attempt.why);
          return disk();
        }
        record("none", attempt.why);
        throw this.notWritten(path, attempt.why);
    }
  }

  private notWritten(path: string, why: Unanswered): RequestError {
    const named = JSON.stringify(path);
    const message =
      why === "timeout"
        ? `the client whose prompt this turn runs did not answer the write of ${named} within clientFileTimeout (${formatDuration(this.deps.timeoutMs)}); nothing was written`
        : `the client whose prompt this turn runs left before answering the write of ${named}; nothing was written`;
    return RequestError.internalError({ code: why === "timeout" ? "client_timeout" : "client_gone", path }, message);
  }

  /** Asks the client, giving up (and withdrawing the request) after the timeout. */
  private async attempt<T>(ask: (signal: AbortSignal) => Promise<T>): Promise<Attempt<T>> {
    const timeout = new AbortController();
    const timer = this.deps.clock.setTimeout(() => timeout.abort(), this.deps.timeoutMs);
    try {
      return { state: "answered", answer: await ask(timeout.signal) };
    } catch (error) {
      if (timeout.signal.aborted) return { state: "unanswered", why: "timeout" };
      // Declared but not handled: the client cannot serve it after all.
      if (error instanceof RequestError && error.code === METHOD_NOT_FOUND) return { state: "lacking" };
      // The client's own answer (a file it refuses, an edit its user rejected) reaches the agent as it would directly.
      if (error instanceof RequestError) return { state: "refused", error };
      // The connection closed under the request.
      return { state: "unanswered", why: "client_gone" };
    } finally {
      timer.cancel();
    }
  }
}
