import type { IncomingMessage } from "node:http";

/** A year: a remembered device stays remembered until it is revoked or the token rotates. */
const MAX_AGE_SECONDS = 365 * 24 * 3600;

/**
 * The cookie of a remembered device. Its name carries the port: cookies are not kept per port,
 * so two Berths on one machine would otherwise overwrite each other's.
 */
export function loginCookieName(port: number): string {
  return `berth-login-${port}`;
}

/** `Set-Cookie` for a remembered device: script cannot read it, no other site's request carries it, every path of Berth gets it. */
export function loginCookie(port: number, value: string): string {
  return `${loginCookieName(port)}=${value}; Max-Age=${MAX_AGE_SECONDS}; Path=/; HttpOnly; SameSite=Strict`;
}

/** `Set-Cookie` that makes the browser drop the cookie. */
export function clearedLoginCookie(port: number): string {
  return `${loginCookieName(port)}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`;
}

/** The value of this port's login cookie in the request, if it carries one. */
export function presentedLoginCookie(req: IncomingMessage, port: number): string | undefined {
  const name = loginCookieName(port);
  for (const pair of (req.headers.cookie ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
