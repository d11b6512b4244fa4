// Terminal logins: ACP auth methods of `type: "terminal"` (the client runs the agent's own command
// with the method's `args`/`env` in a terminal) and `_meta["terminal-auth"]` (the client runs the
// command it names). Berth runs them on the host; clients are shown a local command attaching to it.

/** `clientCapabilities._meta` key by which a client says it runs `_meta["terminal-auth"]` commands; the same key on a method. */
const TERMINAL_AUTH_META = "terminal-auth";

/** What Berth declares to every agent child: it runs terminal logins itself, so agents offer them. */
export const terminalLoginCapabilities = { auth: { terminal: true }, _meta: { [TERMINAL_AUTH_META]: true } } as const;

/**
 * Which terminal logins a client declared: `none`; `terminal` (`auth.terminal`): methods of type
 * terminal; `terminal-meta` (`_meta["terminal-auth"]`, with or without `auth.terminal`): those and
 * the commands methods name in `_meta["terminal-auth"]`.
 */
export type TerminalLoginSupport = "none" | "terminal" | "terminal-meta";

export function terminalLoginSupportOf(capabilities: unknown): TerminalLoginSupport {
  const { auth, _meta: meta } = (isObject(capabilities) ? capabilities : {}) as { auth?: unknown; _meta?: unknown };
  if (isObject(meta) && meta[TERMINAL_AUTH_META] === true) return "terminal-meta";
  return isObject(auth) && auth.terminal === true ? "terminal" : "none";
}

/** A command as an agent's launch or a terminal login names it. */
export interface LoginCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** The agent's own command behind a terminal login, as the host runs it. */
export interface TerminalLogin extends LoginCommand {
  readonly label?: string;
}

/**
 * The auth methods as a client declaring `support` sees them directly from an agent that was told
 * of every terminal login: type-terminal methods only if it declared terminal logins,
 * `_meta["terminal-auth"]` only if it declared that, and then as `localCommand(methodId)` (the words
 * of a command on the client's machine), keeping the agent's other keys (`label`; `env` emptied:
 * its variables are the host's).
 */
export function authMethodsForClient<M>(
  methods: readonly M[],
  support: TerminalLoginSupport,
  localCommand: (methodId: string) => readonly string[],
): M[] {
  return methods.flatMap((method) => {
    if (!isObject(method)) return [method];
    if (method.type === "terminal" && support === "none") return [];
    const meta = method._meta;
    if (!isObject(meta) || meta[TERMINAL_AUTH_META] === undefined) return [method];
    const { [TERMINAL_AUTH_META]: given, ...others } = meta;
    if (support !== "terminal-meta") {
      const { _meta: _dropped, ...rest } = method;
      return [(Object.keys(others).length > 0 ? { ...rest, _meta: others } : rest) as M];
    }
    const [command, ...args] = localCommand(String(method.id));
    const local = { ...(isObject(given) ? given : {}), command, args, ...(isObject(given) && given.env !== undefined ? { env: {} } : {}) };
    return [{ ...method, _meta: { ...meta, [TERMINAL_AUTH_META]: local } } as M];
  });
}

/**
 * The agent's own command for terminal login `methodId`: the command its `_meta["terminal-auth"]`
 * names (with the agent's environment under the method's), else for a method of type terminal the
 * agent's `launch` with the method's `args` and `env`; undefined for any other method.
 */
export function terminalLoginOf(
  launch: LoginCommand,
  authMethods: readonly unknown[] | null | undefined,
  methodId: string,
): TerminalLogin | undefined {
  const method = (authMethods ?? []).find((m): m is Record<string, unknown> => isObject(m) && m.id === methodId);
  if (!method) return undefined;
  const given = terminalAuthCommandOf(method);
  if (given) {
    return {
      command: given.command,
      args: strings(given.args),
      env: { ...launch.env, ...stringValues(given.env) },
      ...(typeof given.label === "string" ? { label: given.label } : {}),
    };
  }
  if (method.type !== "terminal") return undefined;
  return {
    command: launch.command,
    args: [...launch.args, ...strings(method.args)],
    env: { ...launch.env, ...stringValues(method.env) },
    ...(typeof method.name === "string" ? { label: method.name } : {}),
  };
}

/** The command an auth method's `_meta["terminal-auth"]` names (opencode's `opencode auth login`), if it names one. */
export function terminalAuthCommandOf(method: Record<string, unknown>): (Record<string, unknown> & { command: string }) | undefined {
  const given = isObject(method._meta) ? method._meta[TERMINAL_AUTH_META] : undefined;
  return isObject(given) && typeof given.command === "string" ? (given as Record<string, unknown> & { command: string }) : undefined;
}

export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function stringValues(value: unknown): Record<string, string> {
  return isObject(value) ? Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string")) : {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
