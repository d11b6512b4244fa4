import { InstallError, type InstallRefusal } from "../agents/agent-install.js";
import { InvalidSandboxError } from "../sandbox/policy.js";
import { SandboxUnavailableError } from "../sandbox/availability.js";
import { UnknownAgentError } from "../agents/agent-registry.js";
import { CatalogueError } from "../agents/catalogue.js";
import { InstalledListError } from "../agents/installed-agents.js";
import { InstallNotFoundError, InstallRunningError } from "./agent-installs.js";
import { SessionNotFoundError } from "./agent-children.js";
import { OwnedByOtherHostError } from "./owned-elsewhere.js";
import { TurnFailedError, TurnNotStoredError } from "./turns.js";
import { QuestionError } from "./question-desk.js";
import { StoreUnavailableError } from "./store-health.js";
import { AgentLoginError } from "./agent-login-desk.js";
import { LoginCallbackError } from "./login-callback.js";
import { InvalidTitleError } from "./session-titles.js";
import { TurnAlreadyRunningError } from "../lifecycle/executions.js";
import { InvalidLocationError } from "../lifecycle/location-key.js";
import { LocationServicesClosedError } from "../lifecycle/location-services-cache.js";
import { AcquisitionFailedError, HoldsClosedError, StaleHoldError } from "../lifecycle/session-holds.js";
import { LoginsClosedError, NoTerminalLoginError } from "../logins/login-command.js";
import { LoginBusyError } from "../logins/login-runner.js";
import { ChangesError } from "../changes/changes-error.js";
import { GitError } from "../git/git.js";
import { ReviewError } from "./review-desk.js";
import { WorktreeError } from "../worktrees/worktree-errors.js";
import { ForkUnsupportedError } from "./session-fork.js";

// Every error the host lets out, in one place: the protocol edges import them from here only.
export { AcquisitionFailedError, ForkUnsupportedError, QuestionError, SessionNotFoundError, UnknownAgentError };

/** The host is stopping or stopped: it admits no new work. */
export class HostStoppedError extends Error {
  override readonly name = "HostStoppedError";
  constructor() {
    super("the host is shutting down");
  }
}

/** What kind of failure a host error is, whichever protocol reports it. */
export type ErrorClass = "bad_input" | "not_found" | "conflict" | "unavailable" | "internal";

export interface ClassifiedError {
  readonly class: ErrorClass;
  /** A machine code such as `session_not_found`. */
  readonly code: string;
  readonly message: string;
  /** What else the client needs to act on it: a failed check's `output`, a conflict's `files`. */
  readonly details?: Readonly<Record<string, unknown>>;
}

const questionCodes: Readonly<Record<QuestionError["code"], readonly [ErrorClass, string]>> = {
  not_found: ["not_found", "question_not_found"],
  already_resolved: ["conflict", "question_already_resolved"],
  invalid_answer: ["bad_input", "invalid_answer"],
};

const installCodes: Readonly<Record<InstallRefusal, readonly [ErrorClass, string]>> = {
  unknown_version: ["not_found", "version_not_in_registry"],
  not_installed: ["not_found", "agent_not_installed"],
  installed: ["conflict", "agent_installed"],
  no_distribution: ["bad_input", "no_distribution"],
  failed: ["internal", "install_failed"],
};

const loginErrorClasses: Readonly<Record<AgentLoginError["code"], ErrorClass>> = {
  agent_login_not_found: "not_found",
  login_not_waiting: "conflict",
  invalid_login: "bad_input",
};

export function classifyError(error: unknown): ClassifiedError {
  const message = error instanceof Error ? error.message : String(error);
  const as = (errorClass: ErrorClass, code: string): ClassifiedError => ({ class: errorClass, code, message });
  if (error instanceof SessionNotFoundError) return as("not_found", "session_not_found");
  if (error instanceof QuestionError) {
    const [errorClass, code] = questionCodes[error.code];
    return as(errorClass, code);
  }
  if (error instanceof UnknownAgentError) return as("bad_input", "unknown_agent");
  if (error instanceof InstallError) {
    const [errorClass, code] = installCodes[error.refusal];
    return as(errorClass, code);
  }
  if (error instanceof CatalogueError)
    return error.kind === "unknown_agent" ? as("not_found", "agent_not_in_registry") : as("unavailable", "registry_unreadable");
  if (error instanceof InstalledListError) return as("unavailable", "installed_list_damaged");
  if (error instanceof InstallNotFoundError) return as("not_found", "install_not_found");
  if (error instanceof InstallRunningError) return as("conflict", "install_running");
  if (error instanceof AgentLoginError) return as(loginErrorClasses[error.code], error.code);
  // A pasted address that does not match the login's redirect_uri; or the agent's callback did not answer.
  if (error instanceof LoginCallbackError) return as(error.code === "callback_refused" ? "bad_input" : "unavailable", error.code);
  if (error instanceof InvalidLocationError) return as("bad_input", "invalid_location");
  if (error instanceof WorktreeError) return { ...as(error.badInput ? "bad_input" : "conflict", error.code), details: error.details };
  if (error instanceof InvalidSandboxError) return as("bad_input", "invalid_sandbox");
  if (error instanceof SandboxUnavailableError) return as("bad_input", "sandbox_unavailable");
  if (error instanceof InvalidTitleError) return as("bad_input", "invalid_title");
  // A session outside git has no changes to show (409: the session is fine, its directory is not a repository).
  if (error instanceof ReviewError) return as(error.code === "comment_not_found" ? "not_found" : "conflict", error.code);
  // git refused what was asked of the repository (its message says why): the repository's state, not Berth's bug nor
  // the request's (409). git missing on this host, or stopped past its time: the host's, and a retry may do (503).
  if (error instanceof GitError) return as(error.failure === "refused" ? "conflict" : "unavailable", "git_failed");
  if (error instanceof ChangesError) return as(error.code === "not_a_git_repository" ? "conflict" : "bad_input", error.code);
  if (error instanceof TurnAlreadyRunningError) return as("conflict", "turn_in_flight");
  if (error instanceof NoTerminalLoginError) return as("not_found", "no_terminal_login");
  if (error instanceof LoginBusyError) return as("conflict", "login_running");
  // Another host of the fleet runs it: this host only shows it (its message names the owner and its URL).
  if (error instanceof OwnedByOtherHostError) return as("conflict", "owned_by_other_host");
  // The agent failed or crashed mid-turn: not Berth's bug, and the session carries on.
  if (error instanceof TurnFailedError || error instanceof AcquisitionFailedError) return as("unavailable", "agent_failed");
  // The turn's end was refused by the store (the session is another host's now): what the agent said is not all stored.
  if (error instanceof TurnNotStoredError) return as("conflict", "turn_not_stored");
  // The hold left (or was replaced) before its agent was ready: the request raced its own release; retrying holds afresh.
  if (error instanceof StaleHoldError) return as("conflict", "hold_ended");
  // The store could not write what had to be stored first (another process's lock, a full disk): retry later.
  if (error instanceof StoreUnavailableError) return as("unavailable", "store_unavailable");
  // The host refuses new work once shutdown began.
  if (
    error instanceof HoldsClosedError ||
    error instanceof HostStoppedError ||
    error instanceof LocationServicesClosedError ||
    error instanceof LoginsClosedError
  )
    return as("unavailable", "shutting_down");
  return as("internal", "internal");
}
