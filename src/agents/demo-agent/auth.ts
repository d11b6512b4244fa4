import { RequestError, type AuthenticateRequest, type AuthMethod } from "@agentclientprotocol/sdk";

/** Where `authenticate` carries the demo token: ACP has no field for secrets, so `_meta`. */
const tokenMetaKey = "berth-demo/token";

/**
 * Where the agent's own environment may carry the token instead, as clients that keep
 * credentials out of the protocol do: acpx sends `authenticate` with the method id only and
 * starts the agent with `ACPX_AUTH_DEMO_TOKEN` and its promoted form `DEMO_TOKEN` set.
 */
const tokenEnvNames = ["DEMO_TOKEN", "ACPX_AUTH_DEMO_TOKEN"] as const;

export const demoAuthMethod: AuthMethod = {
  id: "demo-token",
  name: "Demo token",
  description: `Any non-empty _meta["${tokenMetaKey}"] passed to authenticate, else $${tokenEnvNames.join(" or $")} in the agent's environment`,
};

/** The variable of {@link envAuthMethod}: set in the agent's environment by whoever starts it. */
const envTokenName = "BERTH_DEMO_ENV_TOKEN";

/**
 * An environment-variable method (as codex-acp's `openai-api-key`): the client starts the agent with
 * the variable set, then names the method in `authenticate`. Not in the SDK's types yet, hence the cast.
 */
export const envAuthMethod = {
  type: "env_var",
  id: "demo-env",
  name: "Demo environment token",
  description: `Requires setting the \`${envTokenName}\` environment variable.`,
  vars: [{ name: envTokenName }],
} as unknown as AuthMethod;

/**
 * One connection's authentication. `authenticate` always works; only with
 * `required` (`--require-auth`) do session methods wait for it, so the
 * zero-config quick start needs no token.
 */
export class AuthGate {
  private authenticated = false;

  /** `env`: the agent's environment, read for {@link tokenEnvNames} when `_meta` has no token. */
  constructor(
    private readonly required: boolean,
    private readonly env: Readonly<Record<string, string | undefined>> = {},
  ) {}

  authenticate(params: AuthenticateRequest): void {
    if (params.methodId === envAuthMethod.id) return this.authenticateFromEnvironment();
    if (params.methodId !== demoAuthMethod.id) {
      throw RequestError.invalidParams(
        { methodId: params.methodId },
        `unknown auth method "${params.methodId}"; this agent offers "${demoAuthMethod.id}" and "${envAuthMethod.id}"`,
      );
    }
    const token = params._meta?.[tokenMetaKey] ?? tokenEnvNames.map((name) => this.env[name]).find((value) => value?.trim());
    if (typeof token !== "string" || token === "") {
      throw RequestError.invalidParams(
        { field: `_meta.${tokenMetaKey}` },
        `"${demoAuthMethod.id}" needs a non-empty string in _meta["${tokenMetaKey}"] (or $${tokenEnvNames.join(" or $")} in the agent's environment)`,
      );
    }
    this.authenticated = true;
  }

  private authenticateFromEnvironment(): void {
    if (!this.env[envTokenName]?.trim()) {
      throw RequestError.invalidParams({ variable: envTokenName }, `"${envAuthMethod.id}" needs $${envTokenName} set in the agent's environment`);
    }
    this.authenticated = true;
  }

  /** Throws ACP's auth-required error (-32000) while authentication is required and missing. */
  check(): void {
    if (this.required && !this.authenticated) {
      throw RequestError.authRequired({ authMethods: [demoAuthMethod.id, envAuthMethod.id] }, `call authenticate with "${demoAuthMethod.id}" first`);
    }
  }
}
