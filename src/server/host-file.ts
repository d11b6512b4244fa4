import { readFileSync, rmSync, writeFileSync } from "node:fs";

/** `<dataDir>/host.json`: how other `berth` commands find the host running on a data directory. */
export interface HostFile {
  /** The server's base URL, e.g. `http://127.0.0.1:7420` (the token is in `<dataDir>/token`). */
  readonly url: string;
  readonly pid: number;
  /** ms since epoch. */
  readonly startedAt: number;
}

export function writeHostFile(path: string, file: HostFile): void {
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}

/**
 * The host file, if there is a readable one. One this user may not read (another user's data directory) throws:
 * "no host running" would be wrong, and the caller says permission denied.
 */
function readHostFile(path: string): HostFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<HostFile>;
    if (typeof parsed.url !== "string" || typeof parsed.pid !== "number" || typeof parsed.startedAt !== "number") return undefined;
    return { url: parsed.url, pid: parsed.pid, startedAt: parsed.startedAt };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM") throw error;
    return undefined;
  }
}

/** The host file of a process that still runs; a file left by a run that died does not count. */
export function runningHost(path: string): HostFile | undefined {
  const file = readHostFile(path);
  if (!file || file.pid === process.pid) return undefined;
  try {
    process.kill(file.pid, 0);
    return file;
  } catch (error) {
    // EPERM: the pid runs under another user, so it is alive.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? file : undefined;
  }
}

/** Removes the host file if it is still this process's own. */
export function deleteHostFile(path: string): void {
  if (readHostFile(path)?.pid === process.pid) rmSync(path, { force: true });
}
