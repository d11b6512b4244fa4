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

/**
 * The values of every cookie named like this port's login cookie, in the order sent. Usually one; a
 * page on another port of this machine can add its own (cookies ignore ports) under a longer `Path`,
 * which browsers send first: every value is tried, none is taken for the device's on its place alone.
 */
export function presentedLoginCookies(req: IncomingMessage, port: number): string[] {
  const name = loginCookieName(port);
  const values: string[] = [];
  for (const pair of (req.headers.cookie ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) values.push(pair.slice(at + 1).trim());
  }
  return values;
}
