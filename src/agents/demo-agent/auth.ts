import { RequestError, type AuthenticateRequest, type AuthMethod } from "@agentclientprotocol/sdk";

/** Where `authenticate` carries the demo token: ACP has no field for secrets, so `_meta`. */
export const tokenMetaKey = "berth-demo/token";

export const demoAuthMethod: AuthMethod = {
  id: "demo-token",
  name: "Demo token",
  description: `Any non-empty _meta["${tokenMetaKey}"] passed to authenticate`,
};

/**
 * One connection's authentication. `authenticate` always works; only with
 * `required` (`--require-auth`) do session methods wait for it, so the
 * zero-config quick start needs no token.
 */
export class AuthGate {
  private authenticated = false;

  constructor(private readonly required: boolean) {}

  authenticate(params: AuthenticateRequest): void {
    if (params.methodId !== demoAuthMethod.id) {
      throw RequestError.invalidParams(
        { methodId: params.methodId },
        `unknown auth method "${params.methodId}"; this agent offers "${demoAuthMethod.id}"`,
      );
    }
    const token = params._meta?.[tokenMetaKey];
    if (typeof token !== "string" || token === "") {
      throw RequestError.invalidParams(
        { field: `_meta.${tokenMetaKey}` },
        `"${demoAuthMethod.id}" needs a non-empty string in _meta["${tokenMetaKey}"]`,
      );
    }
    this.authenticated = true;
  }

  /** Throws ACP's auth-required error (-32000) while authentication is required and missing. */
  check(): void {
    if (this.required && !this.authenticated) {
      throw RequestError.authRequired(
        { authMethods: [demoAuthMethod.id] },
        `call authenticate with "${demoAuthMethod.id}" first`,
      );
    }
  }
}
