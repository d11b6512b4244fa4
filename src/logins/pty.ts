import { spawn } from "node:child_process";
import type { AgentCommand } from "../agents/agent-child.js";
import { shellQuote } from "../config/invocation.js";

/** A terminal's size in character cells. */
export interface WindowSize {
  readonly cols: number;
  readonly rows: number;
}

/** What starts a command in a pseudo-terminal: the program, its arguments and its whole environment. */
export interface PtyLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** The variable the wrapper restores the login's own `SHELL` from (script runs its command with `$SHELL -c`). */
const SAVED_SHELL = "BERTH_LOGIN_SHELL";

/**
 * Inside the pseudo-terminal, before the command: names the terminal's device on fd 3 (the host resizes it by that
 * name), closes fd 3, sets the first window size, gives the command back its own `SHELL`, then becomes the command.
 */
const WRAPPER = [
  "tty >&3",
  "exec 3>&-",
  'stty rows "$1" cols "$2"',
  "shift 2",
  `if [ -n "\${${SAVED_SHELL}+set}" ]; then SHELL="$${SAVED_SHELL}"; export SHELL; else unset SHELL; fi`,
  `unset ${SAVED_SHELL}`,
  'exec "$@"',
].join("; ");

/**
 * How to run `command` in a pseudo-terminal without a native module: the system's `script` (util-linux on Linux, BSD
 * on macOS) owns the terminal and relays it over pipes; its stdin is the keyboard, its stdout the screen, and fd 3
 * (a pipe) receives the terminal's device path once. Nothing is recorded (`/dev/null`).
 */
export function ptyLaunch(command: AgentCommand, size: WindowSize, platform: NodeJS.Platform = process.platform): PtyLaunch {
  const wrapped = ["/bin/sh", "-c", WRAPPER, "berth-login", String(size.rows), String(size.cols), command.command, ...command.args];
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: "xterm-256color", ...command.env };
  if (env.SHELL !== undefined) env[SAVED_SHELL] = env.SHELL;
  if (platform === "darwin") return { command: "script", args: ["-q", "/dev/null", ...wrapped], env };
  // util-linux's script hands its command to `$SHELL -c`: a POSIX shell, whatever the user's login shell is.
  env.SHELL = "/bin/sh";
  return { command: "script", args: ["--quiet", "--return", "--flush", "--command", wrapped.map(shellQuote).join(" "), "/dev/null"], env };
}

/** Sets the window size of the terminal device `path`; its foreground programs get SIGWINCH from the kernel. */
export function resizePty(path: string, size: WindowSize, platform: NodeJS.Platform = process.platform): Promise<void> {
  const device = platform === "darwin" ? "-f" : "-F";
  // Its own process group like every child; it opens the device but never becomes its controlling process.
  const child = spawn("stty", [device, path, "rows", String(size.rows), "cols", String(size.cols)], {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    child.once("error", (error) => reject(new Error(`cannot resize the login's terminal ${path}: ${error.message}`)));
    child.once("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`cannot resize the login's terminal ${path}: stty said ${stderr.trim() || `exit code ${code}`}`)),
    );
  });
}
