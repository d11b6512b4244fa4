import type { IncomingMessage } from "node:http";
import { z } from "zod";
import type { Access } from "./access.js";
import { HttpError, readJsonBody } from "./http-io.js";
import { clearedLoginCookie, loginCookie, presentedLoginCookies } from "./login-cookie.js";
import { empty, json, type Route } from "./router.js";

const rememberBody = z.strictObject({
  label: z
    .string({ error: "expected a label (a string)" })
    .trim()
    .min(1, "expected a non-empty label")
    .max(120, "expected at most 120 characters")
    .optional(),
});

/**
 * Remembered devices and the token's rotation: `POST /api/logins` remembers the device that asks
 * (its cookie, and its page's half in the answer), `GET` lists them, `DELETE` forgets one,
 * `POST /api/token/rotate` replaces the token and forgets them all.
 */
export function loginRoutes(access: Access): Route[] {
  return [
    {
      method: "POST",
      path: "/api/logins",
      handle: async ({ req }) => {
        const body = await readJsonBody(req).then((value) => rememberBody.safeParse(value));
        if (!body.success)
          throw new HttpError(
            400,
            "invalid_body",
            `invalid request body: ${body.error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; ")}`,
          );
        const created = access.logins.create(access.token.value, body.data.label ?? deviceLabel(req));
        return json({ login: { ...created.view, current: true }, pageSecret: created.pageSecret }, 201, {
          "Set-Cookie": loginCookie(access.port, created.cookieValue),
        });
      },
    },
    {
      method: "GET",
      path: "/api/logins",
      handle: ({ req }) => {
        const current = cookieLoginIds(req, access);
        return json({ logins: access.logins.list(access.token.value).map((login) => ({ ...login, current: current.includes(login.id) })) });
      },
    },
    {
      method: "DELETE",
      path: "/api/logins/:id",
      handle: ({ req, params }) => {
        if (!access.logins.revoke(params.id!)) throw new HttpError(404, "login_not_found", `no remembered device "${params.id}"`);
        // Forgetting this very device: its browser drops the cookie too.
        return cookieLoginIds(req, access).includes(params.id!) ? empty(204, { "Set-Cookie": clearedLoginCookie(access.port) }) : empty(204);
      },
    },
    {
      method: "POST",
      path: "/api/token/rotate",
      handle: () => {
        const devices = access.logins.list(access.token.value).length;
        access.token.rotate();
        return json({ rotated: true, devicesForgotten: devices });
      },
    },
  ];
}

/** The logins the request's cookies name (the request is let in already, by one of them or by the token): "this device". */
function cookieLoginIds(req: IncomingMessage, access: Access): string[] {
  return presentedLoginCookies(req, access.port).map((cookie) => cookie.split(".")[0]!);
}

/** "Firefox on Android", from the browser's User-Agent; what a person recognises in the list of devices. */
function deviceLabel(req: IncomingMessage): string {
  const agent = req.headers["user-agent"] ?? "";
  const browser = [
    ["Edg/", "Edge"],
    ["Firefox/", "Firefox"],
    ["Chrome/", "Chrome"],
    ["Safari/", "Safari"],
  ].find(([mark]) => agent.includes(mark!))?.[1];
  const system = [
    ["Android", "Android"],
    ["iPhone", "iPhone"],
    ["iPad", "iPad"],
    ["Mac OS X", "macOS"],
    ["Windows", "Windows"],
    ["CrOS", "ChromeOS"],
    ["Linux", "Linux"],
  ].find(([mark]) => agent.includes(mark!))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? "a browser";
}
