// `berth connect --agent ID ARGS…`: what an editor runs for a terminal auth method of an agent whose command is
// `berth connect` (ACP has the client append the method's `args` to the agent's own command).
import { logIn, loginMethodsOf } from "./commands/login.js";
import { UsageError } from "./exit-codes.js";
import type { HostFlags } from "./host-client.js";

/**
 * Runs the agent's terminal login whose `args` are exactly `args`, as `berth login` does. None: a usage error naming
 * them all, which leads with `unknown option` when the words start with one (a mistyped `--agnet x` is not a login).
 */
export async function runTerminalLoginByArgs(flags: HostFlags, agentId: string, args: readonly string[]): Promise<void> {
  const methods = await loginMethodsOf(flags, agentId);
  const terminal = methods.filter((method) => method.type === "terminal");
  const match = terminal.find((method) => method.args?.length === args.length && method.args.every((arg, i) => arg === args[i]));
  if (match) return logIn(flags, agentId, match.id, methods);
  const offered = terminal.map((method) => `${method.id} (${method.args?.join(" ") || "no arguments"})`).join(", ");
  const logins = offered ? `its terminal logins: ${offered}` : "it offers no terminal login";
  const [first] = args;
  if (first?.startsWith("-"))
    throw new UsageError(`unknown option ${first} (nor are "${args.join(" ")}" the arguments of a terminal login of agent "${agentId}": ${logins})`);
  throw new UsageError(`agent "${agentId}" has no terminal login with the arguments ${args.join(" ")}; ${logins}`);
}
