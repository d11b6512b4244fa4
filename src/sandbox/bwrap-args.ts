import type { SandboxNetwork } from "./policy.js";

/**
 * One mount over the read-only view of `/`: `writable` binds the path as it is, `read-only` binds it back read-only
 * (inside a hidden one), `hidden` lays an empty read-only tmpfs over a directory, or the sandbox's own
 * `/dev/null` over a file (its `/dev` is `nodev`: opening it is refused).
 */
export interface SandboxMount {
  readonly kind: "writable" | "read-only" | "hidden";
  readonly path: string;
  readonly file?: boolean;
}

/** Everything needed to start a process in a sandbox: the paths exist and are absolute and real. */
export interface SandboxPlan {
  /** The bubblewrap binary, found when sandboxes were detected. */
  readonly bwrap: string;
  readonly network: SandboxNetwork;
  readonly mounts: readonly SandboxMount[];
}

/**
 * bwrap's arguments before `--` and the command: `/` read-only, fresh `/dev`, `/proc` and `/tmp`, then the mounts,
 * a parent before what lies inside it (so `~/.ssh` hidden stays hidden in a writable home, and the session's worktree
 * stays writable in the hidden data directory). Its own PID namespace: when the namespace's init (bwrap's inner
 * process, in Berth's process group) is killed, the kernel kills everything in it, `setsid` daemons included. Not
 * `--die-with-parent`: the polite signal of a stop would end the outer bwrap and, through it, kill the namespace at
 * once, before the command could finish cleanly; without it the command gets the signal and its grace, and the kill
 * that follows takes the namespace's init and so the rest.
 */
export function bwrapArgs(plan: Omit<SandboxPlan, "bwrap">, cwd: string): string[] {
  const args = ["--unshare-pid", ...(plan.network === "off" ? ["--unshare-net"] : [])];
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  const mounts = ordered(plan.mounts);
  for (const mount of mounts) args.push(...mountArgs(mount));
  // Last: a hidden directory's tmpfs takes no writes either, once what lies inside it is mounted.
  for (const mount of mounts) if (mount.kind === "hidden" && !mount.file) args.push("--remount-ro", mount.path);
  args.push("--chdir", cwd);
  return args;
}

/** The whole command line that runs `command args` in the plan's sandbox. */
export function sandboxedCommand(plan: SandboxPlan, command: string, args: readonly string[], cwd: string): { command: string; args: string[] } {
  return { command: plan.bwrap, args: [...bwrapArgs(plan, cwd), "--", command, ...args] };
}

function mountArgs(mount: SandboxMount): string[] {
  switch (mount.kind) {
    case "writable":
      return ["--bind", mount.path, mount.path];
    case "read-only":
      return ["--ro-bind", mount.path, mount.path];
    case "hidden":
      return mount.file ? ["--ro-bind", "/dev/null", mount.path] : ["--tmpfs", mount.path];
  }
}

/** Shallower paths first; for one path named twice, hidden wins over writable, writable over read-only. */
function ordered(mounts: readonly SandboxMount[]): SandboxMount[] {
  const rank = { "read-only": 0, writable: 1, hidden: 2 } as const;
  const depth = (path: string) => path.split("/").filter(Boolean).length;
  const byPath = new Map<string, SandboxMount>();
  for (const mount of mounts) {
    const known = byPath.get(mount.path);
    if (!known || rank[mount.kind] > rank[known.kind]) byPath.set(mount.path, mount);
  }
  return [...byPath.values()].sort((a, b) => depth(a.path) - depth(b.path));
}
