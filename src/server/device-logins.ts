import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import type { DeviceLoginView } from "../protocol/device-login-view.js";
import { tokenFingerprint } from "./access-token.js";

interface StoredLogin extends DeviceLoginView {
  /** SHA-256 of the cookie's secret and the page's, hex. */
  readonly hash: string;
  /** The token it was made under: a login of another token is no login. */
  readonly token: string;
}

/** What a new login hands out: the cookie's value and the page's half, each useless without the other. */
export interface NewDeviceLogin {
  readonly view: DeviceLoginView;
  /** `<id>.<secret>`: the HttpOnly cookie's value. */
  readonly cookieValue: string;
  /** The half kept by the page in its own origin's storage and sent as `X-Berth-Login`. */
  readonly pageSecret: string;
}

/** `lastUsedAt` is written at most this often: using a login must not write a file on every request. */
const LAST_USED_PRECISION_MS = 3_600_000;
const MAX_LOGINS = 100;

/**
 * Remembered devices ("remember this device"), kept in `<dataDir>/logins.json` (0600) as
 * hashes only. A login is two secrets: one in an HttpOnly cookie, one in the page's
 * `localStorage`. Browsers send a cookie to every port of a host, so the cookie alone reaches
 * any other local web server; without the page's half, which no other origin can read, it lets
 * nothing in. Each login is bound to the token it was made under: rotating the token (or
 * deleting the token file) ends them all.
 */
export class DeviceLogins {
  private logins: StoredLogin[];

  constructor(
    private readonly path: string,
    private readonly now: () => number = Date.now,
  ) {
    this.logins = readLogins(path);
  }

  create(token: string, label: string): NewDeviceLogin {
    const id = randomBytes(9).toString("base64url");
    const cookieSecret = randomBytes(32).toString("base64url");
    const pageSecret = randomBytes(32).toString("base64url");
    const at = this.now();
    const login: StoredLogin = {
      id,
      label: label.slice(0, 120),
      createdAt: at,
      lastUsedAt: at,
      hash: hashOf(cookieSecret, pageSecret),
      token: tokenFingerprint(token),
    };
    // The oldest go first past the bound: a script cannot grow the file without end.
    this.logins = [...this.current(token), login].slice(-MAX_LOGINS);
    this.save();
    return { view: viewOf(login), cookieValue: `${id}.${cookieSecret}`, pageSecret };
  }

  /** The login id the two halves make up, under the current token; undefined if they make up none. */
  verify(token: string, cookieValue: string | undefined, pageSecret: string | undefined): string | undefined {
    if (cookieValue === undefined || pageSecret === undefined) return undefined;
    const dot = cookieValue.indexOf(".");
    if (dot <= 0) return undefined;
    const id = cookieValue.slice(0, dot);
    const login = this.current(token).find((candidate) => candidate.id === id);
    if (!login) return undefined;
    const expected = Buffer.from(login.hash, "hex");
    const presented = Buffer.from(hashOf(cookieValue.slice(dot + 1), pageSecret), "hex");
    if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return undefined;
    if (this.now() - login.lastUsedAt >= LAST_USED_PRECISION_MS) {
      this.logins = this.logins.map((candidate) => (candidate === login ? { ...candidate, lastUsedAt: this.now() } : candidate));
      this.save();
    }
    return id;
  }

  list(token: string): DeviceLoginView[] {
    return this.current(token).map(viewOf);
  }

  /** Forgets one device; false if there was no such login. */
  revoke(id: string): boolean {
    const before = this.logins.length;
    this.logins = this.logins.filter((login) => login.id !== id);
    if (this.logins.length === before) return false;
    this.save();
    return true;
  }

  /** Forgets every device (the token rotated); returns how many there were. */
  revokeAll(): number {
    const count = this.logins.length;
    this.logins = [];
    this.save();
    return count;
  }

  private current(token: string): StoredLogin[] {
    const fingerprint = tokenFingerprint(token);
    return this.logins.filter((login) => login.token === fingerprint);
  }

  private save(): void {
    const temporary = `${this.path}.${process.pid}.new`;
    writeFileSync(temporary, `${JSON.stringify({ logins: this.logins }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.path);
  }
}

function hashOf(cookieSecret: string, pageSecret: string): string {
  return createHash("sha256").update(`${cookieSecret}.${pageSecret}`).digest("hex");
}

function viewOf({ id, label, createdAt, lastUsedAt }: StoredLogin): DeviceLoginView {
  return { id, label, createdAt, lastUsedAt };
}

/** The stored logins; none if the file is missing or unreadable (the devices log in again: nothing is let in by mistake). */
function readLogins(path: string): StoredLogin[] {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { logins?: unknown };
    return Array.isArray(parsed.logins)
      ? (parsed.logins as StoredLogin[]).filter((login) => typeof login?.id === "string" && typeof login.hash === "string")
      : [];
  } catch {
    return [];
  }
}
