import type { AnyMessage } from "@agentclientprotocol/sdk";
import { LOGIN_ENV_META } from "../protocol/meta-keys.js";
import { variablesOf } from "../protocol/auth-methods.js";

/**
 * What an editor does for an environment-variable auth method — start the agent with the
 * variable set — reaches Berth through `berth connect`: the bridge remembers the agent's auth
 * methods from the `initialize` answer, and hands the method's variables, as found in its own
 * environment, to Berth with the `authenticate` (acpx sets `OPENAI_API_KEY` for `ACPX_AUTH_OPENAI_API_KEY`).
 */
export class LoginEnv {
  private authMethods: readonly unknown[] = [];
  private readonly initializeIds = new Set<unknown>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** A message from the client, towards Berth. */
  outgoing(message: AnyMessage): AnyMessage {
    if (!("method" in message) || !("id" in message)) return message;
    if (message.method === "initialize") this.initializeIds.add(message.id);
    if (message.method !== "authenticate") return message;
    const params = (message.params ?? {}) as { methodId?: unknown; _meta?: Record<string, unknown> | null };
    if (typeof params.methodId !== "string" || params._meta?.[LOGIN_ENV_META] !== undefined) return message;
    const values = Object.fromEntries(
      variablesOf(this.authMethods, params.methodId).flatMap((name) => (this.env[name] ? [[name, this.env[name]]] : [])),
    );
    if (Object.keys(values).length === 0) return message;
    return { ...message, params: { ...params, _meta: { ...params._meta, [LOGIN_ENV_META]: values } } };
  }

  /** A message from Berth, towards the client. */
  incoming(message: AnyMessage): AnyMessage {
    if ("id" in message && this.initializeIds.delete(message.id) && "result" in message) {
      const result = message.result as { authMethods?: unknown } | null;
      if (Array.isArray(result?.authMethods)) this.authMethods = result.authMethods;
    }
    return message;
  }
}
