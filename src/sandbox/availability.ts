import { findExecutable } from "../processes/find-executable.js";
import { settle, settleSync, type Probing } from "../processes/probe-command.js";

/** Whether this machine can run sandboxes: where bwrap is, or why it cannot and what fixes it. */
export type SandboxAvailability =
  | { readonly state: "available"; readonly bwrap: string }
  | { readonly state: "unavailable"; readonly reason: string; readonly fix: string };

const INSTALL_FIX = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) or name its binary in the configuration's sandbox.bwrap";
const USERNS_FIX =
  "allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 (Debian), sysctl kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04), or run Berth where they are allowed (a container needs --security-opt seccomp=unconfined or its runtime's equivalent)";

/** How long the probe sandbox may take to start and exit. */
const PROBE_TIMEOUT_MS = 10_000;

const probed = new Map<string, SandboxAvailability>();
const probing = new Map<string, Promise<SandboxAvailability>>();

/**
 * Finds `bwrap` (a name looked up on PATH, or a path) and starts it once the way every sandbox starts (its own PID
 * and network namespaces, `/` read-only): a kernel or a container that refuses the namespaces is found here, not by a
 * session. Remembered per binary for the life of the process. Blocks while bwrap runs, unless
 * {@link sandboxAvailabilityAsync} found it out already.
 */
export function sandboxAvailability(bwrap = "bwrap"): SandboxAvailability {
  let known = probed.get(bwrap);
  if (!known) {
    known = settleSync(probe(bwrap));
    probed.set(bwrap, known);
  }
  return known;
}

/** {@link sandboxAvailability} without blocking the event loop while bwrap runs (the host, at start). */
export function sandboxAvailabilityAsync(bwrap = "bwrap"): Promise<SandboxAvailability> {
  const known = probed.get(bwrap);
  if (known) return Promise.resolve(known);
  let running = probing.get(bwrap);
  if (!running) {
    running = settle(probe(bwrap)).then((availability) => {
      if (!probed.has(bwrap)) probed.set(bwrap, availability);
      return probed.get(bwrap)!;
    });
    probing.set(bwrap, running);
  }
  return running;
}

function probe(bwrap: string): Probing<SandboxAvailability> {
  const found = findExecutable(bwrap, process.cwd(), process.env.PATH);
  if ("code" in found) {
    const what = found.code === "EACCES" ? "is not executable" : "was not found";
    return { answer: { state: "unavailable", reason: `bubblewrap (${JSON.stringify(bwrap)}) ${what}`, fix: INSTALL_FIX } };
  }
  return {
    run: {
      command: found.path,
      args: ["--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"],
      timeoutMs: PROBE_TIMEOUT_MS,
    },
    finish: (run) => {
      if (run.status === 0) return { state: "available", bwrap: found.path };
      const said = run.stderr.trim() || run.error?.message || `exit code ${String(run.status)}`;
      return { state: "unavailable", reason: `${found.path} cannot create a sandbox here (${said})`, fix: USERNS_FIX };
    },
  };
}

/** A sandboxed session was asked for where sandboxes cannot run: never started without one. */
export class SandboxUnavailableError extends Error {
  override readonly name = "SandboxUnavailableError";
  constructor(availability: Extract<SandboxAvailability, { state: "unavailable" }>) {
    super(`this session asks for a sandbox, but ${availability.reason}: ${availability.fix}`);
  }
}
