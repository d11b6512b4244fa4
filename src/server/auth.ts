import { hostname, networkInterfaces } from "node:os";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";

export const TOKEN_COOKIE = "berth_token";

/**
 * The access token of a data directory: made on first start (32 random bytes, base64url),
 * kept in `tokenPath` readable by its owner only, and the same on every later start.
 */
export function loadOrCreateToken(tokenPath: string): string {
  try {
    writeFileSync(tokenPath, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  // A token readable by others is no secret: tighten a file someone loosened.
  if ((statSync(tokenPath).mode & 0o077) !== 0) chmodSync(tokenPath, 0o600);
  const token = readFileSync(tokenPath, "utf8").trim();
  if (token.length < 16) throw new Error(`the access token in ${tokenPath} is too short (${token.length} characters): delete the file to make a new one`);
  return token;
}

/** The token a request carries: `Authorization: Bearer`, else `?token=`, else the `berth_token` cookie. */
export function presentedToken(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice("Bearer ".length).trim();
  return url.searchParams.get("token") ?? cookieValue(req.headers.cookie, TOKEN_COOKIE);
}

export function tokenMatches(presented: string | undefined, token: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Set on an authorized page load, so the dashboard's later asset requests carry the token. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/**
 * Browsers send `Origin` on WebSocket upgrades; only pages of this server may open one.
 * Non-browser clients send none and are judged by their token alone.
 */
export function originAllowed(
  origin: string | undefined,
  listenHost: string,
  port: number,
  localAddresses: () => string[] = machineAddresses,
): boolean {
  if (origin === undefined) return true;
  const hosts = [listenHost, "localhost", "127.0.0.1"];
  // Listening on every interface, pages are served from any of this machine's addresses (a phone on the LAN).
  if (WILDCARD_HOSTS.has(listenHost)) hosts.push(...localAddresses(), hostname());
  const own = new Set(hosts.map((host) => `http://${hostForUrl(host)}:${port}`.toLowerCase()));
  return own.has(origin.toLowerCase());
}

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

function machineAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((address) => (address ? [address.address] : []));
}

/** IPv6 literals are bracketed in URLs. */
export function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(";") ?? []) {
    const separator = part.indexOf("=");
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}
