import { createWriteStream, type WriteStream } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/** How long spilled terminal output is kept by default. */
export const DEFAULT_OUTPUT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

const FILE_PREFIX = "terminal-";
const FILE_SUFFIX = ".log";

export function outputFilePath(outputDir: string, terminalId: string): string {
  return join(outputDir, `${FILE_PREFIX}${terminalId}${FILE_SUFFIX}`);
}

/**
 * The full output of one terminal, appended as it arrives. A failing disk
 * must not take the terminal down: the first write error stops the spill and
 * is kept for whoever asks.
 */
export class OutputFile {
  private readonly stream: WriteStream;
  private failure: Error | undefined;

  constructor(readonly path: string) {
    // The data directory is its owner's alone: output is 0600 whatever the umask.
    this.stream = createWriteStream(path, { flags: "a", mode: 0o600 });
    this.stream.on("error", (error) => {
      this.failure ??= error;
    });
  }

  /** The write error that stopped the spill, if any. */
  get error(): Error | undefined {
    return this.failure;
  }

  write(chunk: Uint8Array): void {
    if (!this.failure) this.stream.write(chunk);
  }

  /** Flushes and closes the file; safe to call more than once. */
  async close(): Promise<void> {
    if (this.stream.closed) return;
    await new Promise<void>((resolve) => {
      this.stream.once("close", resolve);
      this.stream.end();
    });
  }
}

export interface RemovedOutputFile {
  readonly path: string;
  /** When the file was last written, milliseconds since the epoch. */
  readonly modifiedAt: number;
}

/**
 * Removes terminal output files in `outputDir` last written more than
 * `retentionMs` before `now`. Other files in the directory are never touched;
 * a missing directory has nothing to remove.
 */
export async function deleteExpiredOutput(
  outputDir: string,
  retentionMs: number = DEFAULT_OUTPUT_RETENTION_MS,
  now: number = Date.now(),
): Promise<RemovedOutputFile[]> {
  if (!Number.isFinite(retentionMs) || retentionMs < 0) {
    throw new Error(`output retention must be a non-negative number of milliseconds, got ${String(retentionMs)}`);
  }
  let names: string[];
  try {
    names = await readdir(outputDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const removed: RemovedOutputFile[] = [];
  for (const name of names) {
    if (!name.startsWith(FILE_PREFIX) || !name.endsWith(FILE_SUFFIX)) continue;
    const path = join(outputDir, name);
    // Undefined when another clean-up removed it meanwhile.
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || now - info.mtimeMs <= retentionMs) continue;
    await rm(path, { force: true });
    removed.push({ path, modifiedAt: info.mtimeMs });
  }
  return removed;
}
