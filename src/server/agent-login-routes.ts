import { z } from "zod";
import type { Host } from "../host/host.js";
import { LOGIN_ENV_META } from "../protocol/meta-keys.js";
import { readJsonBody } from "./http-io.js";
import { parse } from "./rest-routes.js";
import { json, type Route } from "./router.js";

const startBody = z.strictObject({
  methodId: z.string({ error: "expected the id of one of the agent's auth methods" }).min(1, "expected an auth method id"),
  env: z.record(z.string(), z.string({ error: "expected each variable's value as a string" })).optional(),
});

const callbackBody = z.strictObject({
  address: z.string({ error: "expected the address your browser ended on" }).min(1, "expected the address your browser ended on"),
});

/**
 * An agent's logins from any device (docs/agent-login.md): its auth methods and running logins, a
 * login started (an environment-variable method's values handed over, never shown again), and the
 * address a browser ended on handed to the agent's callback on this host.
 */
export function agentLoginRoutes(host: Host): Route[] {
  return [
    { method: "GET", path: "/api/agents/:id/logins", handle: async ({ params }) => json(await host.agentLogins(params.id!)) },
    {
      method: "POST",
      path: "/api/agents/:id/logins",
      handle: async ({ req, res, params }) => {
        const { methodId, env } = parse(startBody, await readJsonBody(req));
        // The client gave up: the wait for an address stops with it (the login itself runs on, listed).
        const gone = new AbortController();
        res.once("close", () => gone.abort());
        return json(await host.startAgentLogin(params.id!, { methodId, ...(env ? { _meta: { [LOGIN_ENV_META]: env } } : {}) }, gone.signal), 201);
      },
    },
    {
      method: "POST",
      path: "/api/agents/:id/logins/:loginId/callback",
      handle: async ({ req, res, params }) => {
        const { address } = parse(callbackBody, await readJsonBody(req));
        // The client gave up: the wait for the login's end stops with it (the login itself runs on).
        const gone = new AbortController();
        res.once("close", () => gone.abort());
        return json(await host.deliverLoginCallback(params.id!, params.loginId!, address, gone.signal));
      },
    },
  ];
}
