import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { RequestError, type AuthenticateRequest } from "@agentclientprotocol/sdk";
import type { AgentCommand } from "../agents/agent-child.js";
import { LOGIN_ENV_META } from "../protocol/meta-keys.js";
import { variablesOf } from "../protocol/auth-methods.js";

/** An `authenticate` the agent accepted, and the variables its children need for it. */
export interface Login {
  readonly request: AuthenticateRequest;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The login each agent accepted, replayed to every later child of that agent so a session
 * outlives the stop of its process. Credentials in it (a token in `_meta`, an API key in a
 * variable) never reach the journal, the logs or the API: in memory only, or in a 0600 file when
 * configured.
 */
export class AgentLogins {
  private readonly logins: Map<string, Login>;

  /** `file`: where logins survive a restart; undefined keeps them in memory only. A file that cannot be read is reported, and logins start empty. */
  constructor(
    private readonly file: string | undefined,
    onUnreadable: (error: unknown) => void = () => undefined,
  ) {
    let stored: Record<string, Login> = {};
    try {
      stored = file ? readLogins(file) : {};
    } catch (error) {
      onUnreadable(error);
    }
    this.logins = new Map(Object.entries(stored));
  }

  get(agentId: string): Login | undefined {
    return this.logins.get(agentId);
  }

  remember(agentId: string, login: Login): void {
    this.logins.set(agentId, login);
    this.save();
  }

  /** The agent's login is no longer replayed (the client logged out), here and in the file. */
  delete(agentId: string): void {
    if (this.logins.delete(agentId)) this.save();
  }

  private save(): void {
    if (!this.file) return;
    // Whole or not at all: a crash mid-write must not leave a file that blocks the next start.
    const next = `${this.file}.${process.pid}.tmp`;
    writeFileSync(next, JSON.stringify(Object.fromEntries(this.logins)), { mode: 0o600 });
    renameSync(next, this.file);
  }
}

/**
 * A client's `authenticate` as the agent gets it, and the variables it hands over for the
 * method: only the variables the agent's own auth method names (nothing else reaches its
 * environment), each a string.
 */
export function loginOf(request: AuthenticateRequest, authMethods: readonly unknown[] | null | undefined): Login {
  const { [LOGIN_ENV_META]: given, ...meta } = request._meta ?? {};
  const forwarded: AuthenticateRequest = { ...request, _meta: Object.keys(meta).length > 0 ? meta : undefined };
  if (forwarded._meta === undefined) delete forwarded._meta;
  if (given === undefined || given === null) return { request: forwarded, env: {} };
  const allowed = variablesOf(authMethods, request.methodId);
  if (typeof given !== "object" || Array.isArray(given))
    throw RequestError.invalidParams({ key: LOGIN_ENV_META }, `_meta["${LOGIN_ENV_META}"] must be an object of variable names to string values`);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!allowed.includes(name)) {
      throw RequestError.invalidParams(
        { key: LOGIN_ENV_META, variable: name },
        `auth method "${request.methodId}" takes no variable "${name}"${allowed.length > 0 ? ` (it takes ${allowed.join(", ")})` : " (it is not an environment-variable method)"}`,
      );
    }
    if (typeof value !== "string") throw RequestError.invalidParams({ key: LOGIN_ENV_META, variable: name }, `variable "${name}" must be a string`);
    // An environment cannot hold one; refused here, the value never reaches an error message (it is a secret).
    if (value.includes("\0"))
      throw RequestError.invalidParams({ key: LOGIN_ENV_META, variable: name }, `variable "${name}" must not contain a NUL character`);
    env[name] = value;
  }
  return { request: forwarded, env };
}

/** The agent's command with a login's variables set. */
export function withLoginEnv(command: AgentCommand, login: Login | undefined): AgentCommand {
  return login && Object.keys(login.env).length > 0 ? { ...command, env: { ...command.env, ...login.env } } : command;
}

function readLogins(file: string): Record<string, Login> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return {};
  }
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error(`${file} does not hold agent logins (expected a JSON object)`);
  return parsed as Record<string, Login>;
}
