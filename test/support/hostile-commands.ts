import { chmodSync, closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "./process-table.js";

/**
 * A program held open for writing, which `spawn` refuses by throwing (ETXTBSY) instead of emitting `error`. `run`
 * gets its path; the program is closed and removed after.
 */
export async function withBusyProgram<T>(run: (program: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "berth-busy-"));
  const program = join(dir, "program");
  copyFileSync("/bin/true", program);
  chmodSync(program, 0o755);
  const open = openSync(program, "r+");
  try {
    return await run(program);
  } finally {
    closeSync(open);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A shell script that exits at once, leaving a process in a session of its own that holds its stdout and stderr for
 * 30 s: `run` gets the script; the left-behind process is killed by its pid after.
 */
export async function withHeldPipes<T>(run: (script: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "berth-held-"));
  const pidFile = join(dir, "pid");
  try {
    return await run(`setsid sh -c 'echo $$ > "${pidFile}"; exec sleep 30' & exit 0`);
  } finally {
    // Killed with its group before it left the group (a slow start), it never writes its pid: nothing is left to end.
    const written = () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "";
    await waitUntil(written, "the left-behind process wrote its pid").catch(() => undefined);
    if (written()) process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}
