// ACP auth methods as Berth reads them: shared by the host and `berth connect`.
import { strings, terminalAuthCommandOf } from "./terminal-logins.js";

/** The variable names of an `env_var` auth method (ACP's auth RFD: `{ type: "env_var", vars: [{ name }] }`). */
export function variablesOf(authMethods: readonly unknown[] | null | undefined, methodId: string): string[] {
  const method = (authMethods ?? []).find(
    (m): m is Record<string, unknown> => typeof m === "object" && m !== null && (m as { id?: unknown }).id === methodId,
  );
  if (method?.type !== "env_var" || !Array.isArray(method.vars)) return [];
  return method.vars.flatMap((v: unknown) =>
    typeof v === "object" && v !== null && typeof (v as { name?: unknown }).name === "string" ? [(v as { name: string }).name] : [],
  );
}

/**
 * An auth method as a page chooses how to log in: ACP's `type`; absent, "terminal" when its `_meta["terminal-auth"]` names a
 * command (Berth runs it in a terminal on the host), else "agent" (the agent runs its own login).
 */
export interface AuthMethodView {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly type: string;
  /** An `env_var` method's variables. */
  readonly vars?: readonly string[];
  /** A `type: "terminal"` method's arguments, which ACP has a client append to the agent's own command (`berth connect` matches them). */
  readonly args?: readonly string[];
}

export function authMethodsOf(authMethods: readonly unknown[] | null | undefined): AuthMethodView[] {
  return (authMethods ?? []).flatMap((method) => {
    if (typeof method !== "object" || method === null) return [];
    const { id, name, description, type, args } = method as Record<string, unknown>;
    if (typeof id !== "string") return [];
    const kind = typeof type === "string" ? type : terminalAuthCommandOf(method as Record<string, unknown>) ? "terminal" : "agent";
    return [
      {
        id,
        name: typeof name === "string" ? name : id,
        ...(typeof description === "string" ? { description } : {}),
        type: kind,
        ...(kind === "env_var" ? { vars: variablesOf(authMethods, id) } : {}),
        ...(type === "terminal" ? { args: strings(args) } : {}),
      },
    ];
  });
}
