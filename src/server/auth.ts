import { hostname } from "node:os";
import { isIP } from "node:net";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import type { AllowedHost } from "../config/allowed-hosts.js";

/** The token of a data directory, and whether this call made it (so it is shown once, on creation). */
export interface LoadedToken {
  readonly token: string;
  readonly created: boolean;
}

/**
 * The access token of a data directory: made on first start (32 random bytes, base64url),
 * kept in `tokenPath` readable by its owner only, and the same on every later start.
 */
export function loadOrCreateToken(tokenPath: string): string {
  return loadToken(tokenPath).token;
}

/** {@link loadOrCreateToken}, telling whether the file was just created. */
export function loadToken(tokenPath: string): LoadedToken {
  let created = false;
  try {
    writeFileSync(tokenPath, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  // A token readable by others is no secret: tighten a file someone loosened.
  if ((statSync(tokenPath).mode & 0o077) !== 0) chmodSync(tokenPath, 0o600);
  const token = readFileSync(tokenPath, "utf8").trim();
  if (token.length < 16)
    throw new Error(`the access token in ${tokenPath} is too short (${token.length} characters): delete the file to make a new one`);
  return { token, created };
}

/**
 * The token a request carries: `Authorization: Bearer` (the scheme in any case, RFC 9110), and
 * only there. Never a cookie: cookies are not scoped by port, so every other web server of this
 * machine would receive it. Never the URL either: proxies log URLs and browsers keep them in
 * their history; what cannot send a header (EventSource, a browser's WebSocket) presents a
 * single-use ticket instead (`POST /api/tickets`, then `?ticket=`).
 */
export function presentedToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const bearer = header === undefined ? undefined : /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return bearer?.[1];
}

export function tokenMatches(presented: string | undefined, token: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether the `Host` header names this machine, so the request cannot come from a page whose own
 * name was rebound to a loopback address (DNS rebinding): an IP literal (a browser's page at an IP
 * literal can only be this server's own), `localhost` and `*.localhost` (browsers resolve them to
 * loopback themselves), the address Berth listens on, and this machine's host name. The port is
 * not compared: a tunnel (`ssh -L 8000:127.0.0.1:7420`) changes it and rebinding needs a name.
 * A request without `Host` (HTTP/1.0, never a browser) passes. `allowed` adds the names of a
 * reverse proxy in front of Berth (config `server.allowedHosts`).
 */
export function hostAllowed(
  hostHeader: string | undefined,
  listenHost: string,
  allowed: readonly AllowedHost[] = [],
  machineName: string = hostname(),
): boolean {
  if (hostHeader === undefined) return true;
  const name = hostnameOf(hostHeader);
  if (name === undefined) return false;
  if (isIP(name.replace(/^\[|\]$/g, "")) !== 0) return true;
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  const own = new Set([listenHost.toLowerCase(), machineName.toLowerCase(), `${machineName.toLowerCase()}.local`]);
  return own.has(name) || allowed.some((entry) => entry.name === name);
}

/**
 * Whether a browser's `Origin` is the page Berth served: the same host and port as the `Host` the
 * request was sent to (which {@link hostAllowed} vetted), scheme `http:` (Berth has no TLS of its own), or a page at an allowed proxy name (a
 * proxy may rewrite `Host`), on the entry's port or else its scheme's default port. Pages on
 * another port of the same machine are other sites and are refused, as are `null` origins
 * (sandboxed frames, files). Non-browser clients send no Origin and are judged by their token alone.
 */
export function originAllowed(origin: string | undefined, hostHeader: string | undefined, allowed: readonly AllowedHost[] = []): boolean {
  if (origin === undefined) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return false;
  const port = parsed.port === "" ? undefined : Number(parsed.port);
  if (allowed.some((entry) => entry.name === parsed.hostname && entry.port === port)) return true;
  // Berth itself speaks plain HTTP: an https page with the same host and port is another origin (only a proxy's, allowed above).
  return parsed.protocol === "http:" && hostHeader !== undefined && parsed.host === new URL(`http://${hostHeader}`).host;
}

/**
 * `Sec-Fetch-Site` (sent by every current browser): only `same-origin` and `none` (the person typed
 * the address or opened a bookmark) may reach the API. `same-site` is refused on purpose: browsers
 * call another port of the same host "same site", Berth's threat model does not.
 */
export function fetchSiteAllowed(secFetchSite: string | undefined): boolean {
  return secFetchSite === undefined || secFetchSite === "same-origin" || secFetchSite === "none";
}

/** The lower-case host name of a `Host` header (IPv6 literals keep their brackets); undefined if it is not one. */
function hostnameOf(hostHeader: string): string | undefined {
  try {
    const url = new URL(`http://${hostHeader}`);
    if (url.username || url.password || url.pathname !== "/" || url.search || url.hash) return undefined;
    // `localhost.` is `localhost`: a fully qualified name ends in a dot.
    return url.hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

/** IPv6 literals are bracketed in URLs. */
export function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
