import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  CreateTerminalRequest,
  CreateTerminalResponse,
  KillTerminalRequest,
  KillTerminalResponse,
  ReadTextFileRequest,
  ReadTextFileResponse,
  ReleaseTerminalRequest,
  ReleaseTerminalResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  TerminalOutputRequest,
  TerminalOutputResponse,
  WaitForTerminalExitRequest,
  WaitForTerminalExitResponse,
  WriteTextFileRequest,
  WriteTextFileResponse,
} from "@agentclientprotocol/sdk";

/**
 * The files of the client whose prompt the agent works on, as it declared them (`clientCapabilities.fs`): an editor
 * reads its unsaved buffers and puts writes through its own review. Requests carry Berth's session id.
 */
export interface ClientFiles {
  readonly readTextFile: boolean;
  readonly writeTextFile: boolean;
  read(params: ReadTextFileRequest, signal: AbortSignal): Promise<ReadTextFileResponse>;
  write(params: WriteTextFileRequest, signal: AbortSignal): Promise<WriteTextFileResponse>;
}

/**
 * What Berth answers, as the ACP client, to one agent child on behalf of its session:
 * updates are journaled, questions persisted, files and terminals served on the host.
 */
export interface AgentClientHandlers {
  /**
   * Called synchronously, in arrival order. `line` is the JSON-RPC message exactly as the agent
   * wrote it, when it came through the fast path (the journal's writer stores its update row from it).
   */
  sessionUpdate(notification: SessionNotification, line?: string): void;
  requestPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  createElicitation(params: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse>;
  /**
   * `prompter`: the files given with the prompt the agent was working on when it sent the request (the oldest it had
   * not answered, by the order on the wire: prompts-in-flight.ts); undefined when none was, or its sender gave none.
   */
  readTextFile(params: ReadTextFileRequest, prompter: ClientFiles | undefined): Promise<ReadTextFileResponse>;
  writeTextFile(params: WriteTextFileRequest, prompter: ClientFiles | undefined): Promise<WriteTextFileResponse>;
  createTerminal(params: CreateTerminalRequest): Promise<CreateTerminalResponse>;
  terminalOutput(params: TerminalOutputRequest): Promise<TerminalOutputResponse>;
  waitForTerminalExit(params: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse>;
  killTerminal(params: KillTerminalRequest): Promise<KillTerminalResponse>;
  releaseTerminal(params: ReleaseTerminalRequest): Promise<ReleaseTerminalResponse>;
  /** A request Berth does not answer itself (an extension method): the session's clients do. */
  relayRequest(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  /** A notification Berth does not act on: passed on to the session's clients. */
  relayNotification(method: string, params: unknown): void;
}
