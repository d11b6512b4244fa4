import type { LoginRunner } from "../host/views.js";
import { HttpError } from "./http-io.js";
import { empty, json, type Route } from "./router.js";

/** Agents' running terminal logins (the terminals themselves are WebSockets): `GET` lists them, `DELETE` stops one. */
export function terminalLoginRoutes(logins: LoginRunner): Route[] {
  return [
    { method: "GET", path: "/api/terminal-logins", handle: () => json({ logins: logins.list() }) },
    {
      method: "DELETE",
      path: "/api/agents/:id/logins/:method",
      handle: async ({ params }) => {
        const { id, method } = params as { id: string; method: string };
        if (await logins.stop(id, method)) return empty();
        throw new HttpError(
          404,
          "login_not_found",
          `no terminal login of agent ${JSON.stringify(id)} by method ${JSON.stringify(method)} is running`,
        );
      },
    },
  ];
}
