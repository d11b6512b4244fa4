import {
  RequestError,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type WriteTextFileRequest,
  type WriteTextFileResponse,
} from "@agentclientprotocol/sdk";
import type { Clock } from "../lifecycle/clock.js";
import type { HostRecord } from "./host-records.js";

/**
 * The files of the client whose prompt a turn runs, as it declared them (`clientCapabilities.fs`): an editor reads its
 * unsaved buffers and puts writes through its own review. Requests carry Berth's session id.
 */
export interface ClientFiles {
  readonly readTextFile: boolean;
  readonly writeTextFile: boolean;
  read(params: ReadTextFileRequest, signal: AbortSignal): Promise<ReadTextFileResponse>;
  write(params: WriteTextFileRequest, signal: AbortSignal): Promise<WriteTextFileResponse>;
}

type FileRecord = Extract<HostRecord, { kind: "file_request" }>;
type FileMethod = FileRecord["method"];
/** Why the disk answered a request the prompting client was asked first. */
type DiskReason = NonNullable<FileRecord["why"]>;

/** How the client's attempt ended: its answer, its own refusal (which the agent gets as it would directly), or a fall back. */
type Attempt<T> =
  | { readonly state: "answered"; readonly answer: T }
  | { readonly state: "refused"; readonly error: RequestError }
  | { readonly state: "fell_back"; readonly why: DiskReason };

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
 * Where an agent's `fs/*` requests are answered: by the client that sent the prompt in flight when it declared the
 * capability (as it would be without Berth), else by the disk of the session's location (Berth's own file access).
 * The disk also answers when that client is gone, lacks the method, or does not answer within the timeout, so the
 * agent keeps working. Every request put to a client is recorded (`file_request`) with who answered it.
 */
export class EditorFiles {
  private readonly prompting = new Map<string, ClientFiles>();

  constructor(private readonly deps: EditorFilesDeps) {}

  /** The client's files serve the session's agent until the returned function is called (its turn ended). */
  during(sessionId: string, files: ClientFiles): () => void {
    this.prompting.set(sessionId, files);
    return () => {
      if (this.prompting.get(sessionId) === files) this.prompting.delete(sessionId);
    };
  }

  read(sessionId: string, params: ReadTextFileRequest, local: LocalFiles<ReadTextFileResponse>): Promise<ReadTextFileResponse> {
    const files = this.prompting.get(sessionId);
    if (!files?.readTextFile) return local.disk();
    return this.served(sessionId, "fs/read_text_file", params.path, (path, signal) => files.read({ ...params, path }, signal), local);
  }

  write(sessionId: string, params: WriteTextFileRequest, local: LocalFiles<WriteTextFileResponse>): Promise<WriteTextFileResponse> {
    const files = this.prompting.get(sessionId);
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
    if (attempt.state === "fell_back") {
      this.deps.record({ kind: "file_request", sessionId, method, path, by: "disk", why: attempt.why });
      return disk();
    }
    this.deps.record({ kind: "file_request", sessionId, method, path, by: "client" });
    if (attempt.state === "refused") throw attempt.error;
    return attempt.answer;
  }

  /** Asks the client, giving up (and withdrawing the request) after the timeout. */
  private async attempt<T>(ask: (signal: AbortSignal) => Promise<T>): Promise<Attempt<T>> {
    const timeout = new AbortController();
    const timer = this.deps.clock.setTimeout(() => timeout.abort(), this.deps.timeoutMs);
    try {
      return { state: "answered", answer: await ask(timeout.signal) };
    } catch (error) {
      if (timeout.signal.aborted) return { state: "fell_back", why: "timeout" };
      // Declared but not handled: the client cannot serve it after all.
      if (error instanceof RequestError && error.code === METHOD_NOT_FOUND) return { state: "fell_back", why: "client_lacks" };
      // The client's own answer (a file it refuses, an edit its user rejected) reaches the agent as it would directly.
      if (error instanceof RequestError) return { state: "refused", error };
      // The connection closed under the request.
      return { state: "fell_back", why: "client_gone" };
    } finally {
      timer.cancel();
    }
  }
}

const METHOD_NOT_FOUND = -32601;
