import { createHash, randomBytes } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { tokenMatches } from "./auth.js";

/** 32 random bytes, base64url: the form of every access token Berth makes. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Replaces the token file whole: a reader never sees half a token, and the file is never readable by others. */
export function writeTokenFile(path: string, token: string): void {
  const temporary = `${path}.${process.pid}.new`;
  writeFileSync(temporary, token, { mode: 0o600 });
  renameSync(temporary, path);
}

/** A short, one-way name for a token, so what was made under it can be told from what was made under another. */
export function tokenFingerprint(token: string): string {
  return createHash("sha256").update(token).digest("base64url").slice(0, 22);
}

/**
 * The host's access token while it runs, kept in `<dataDir>/token`. `rotate` makes a new one,
 * replaces the file and tells every listener (remembered logins, single-use tickets, open
 * connections): whatever the old token let in is let in no more.
 */
export class AccessToken {
  private readonly listeners = new Set<(token: string) => void>();

  constructor(
    private current: string,
    private readonly path: string,
  ) {}

  get value(): string {
    return this.current;
  }

  matches(presented: string | undefined): boolean {
    return tokenMatches(presented, this.current);
  }

  rotate(): string {
    const next = newToken();
    writeTokenFile(this.path, next);
    this.current = next;
    for (const listener of [...this.listeners]) listener(next);
    return next;
  }

  /** Called after each rotation, with the new token. */
  onRotate(listener: (token: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
