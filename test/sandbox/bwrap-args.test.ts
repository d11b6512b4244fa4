import { describe, expect, it } from "vitest";
import { bwrapArgs, sandboxedCommand, type SandboxMount } from "../../src/sandbox/bwrap-args.js";

/** The mount arguments alone: what follows the fixed base (`/` read-only, `/dev`, `/proc`, `/tmp`) up to `--chdir`. */
function mountsOf(args: readonly string[]): string[] {
  const start = args.indexOf("/tmp") + 1;
  return args.slice(start, args.indexOf("--chdir"));
}

describe("bwrapArgs", () => {
  it("keeps / read-only with fresh /dev, /proc and /tmp, its own PID namespace, and the cwd (no --die-with-parent: a stop's polite signal must not end it)", () => {
    const args = bwrapArgs({ network: "on", mounts: [] }, "/w/app");
    expect(args).toEqual(["--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--chdir", "/w/app"]);
  });

  it("network off: a network namespace of its own", () => {
    expect(bwrapArgs({ network: "off", mounts: [] }, "/w")).toContain("--unshare-net");
    expect(bwrapArgs({ network: "on", mounts: [] }, "/w")).not.toContain("--unshare-net");
  });

  it("mounts a parent before what lies inside it: a secret in a writable home stays hidden, a worktree in the hidden data directory writable", () => {
    const mounts: SandboxMount[] = [
      { kind: "hidden", path: "/home/u/.ssh" },
      { kind: "writable", path: "/home/u/.local/share/berth/worktrees/s1" },
      { kind: "writable", path: "/home/u" },
      { kind: "hidden", path: "/home/u/.local/share/berth" },
      { kind: "read-only", path: "/home/u/.local/share/berth/agents" },
    ];
    expect(mountsOf(bwrapArgs({ network: "on", mounts }, "/home/u"))).toEqual([
      ...["--bind", "/home/u", "/home/u"],
      ...["--tmpfs", "/home/u/.ssh"],
      ...["--tmpfs", "/home/u/.local/share/berth"],
      ...["--ro-bind", "/home/u/.local/share/berth/agents", "/home/u/.local/share/berth/agents"],
      ...["--bind", "/home/u/.local/share/berth/worktrees/s1", "/home/u/.local/share/berth/worktrees/s1"],
      ...["--remount-ro", "/home/u/.ssh", "--remount-ro", "/home/u/.local/share/berth"],
    ]);
  });

  it("hides a file behind /dev/null, a directory behind an empty tmpfs", () => {
    const mounts: SandboxMount[] = [
      { kind: "hidden", path: "/home/u/.netrc", file: true },
      { kind: "hidden", path: "/home/u/.aws" },
    ];
    expect(mountsOf(bwrapArgs({ network: "on", mounts }, "/w"))).toEqual([
      ...["--ro-bind", "/dev/null", "/home/u/.netrc"],
      ...["--tmpfs", "/home/u/.aws", "--remount-ro", "/home/u/.aws"],
    ]);
  });

  it("one path named twice: hidden wins over writable, writable over read-only", () => {
    const hiddenAndWritable: SandboxMount[] = [
      { kind: "hidden", path: "/s" },
      { kind: "writable", path: "/s" },
    ];
    expect(mountsOf(bwrapArgs({ network: "on", mounts: hiddenAndWritable }, "/w"))).toEqual(["--tmpfs", "/s", "--remount-ro", "/s"]);
    const readOnlyAndWritable: SandboxMount[] = [
      { kind: "writable", path: "/s" },
      { kind: "read-only", path: "/s" },
    ];
    expect(mountsOf(bwrapArgs({ network: "on", mounts: readOnlyAndWritable }, "/w"))).toEqual(["--bind", "/s", "/s"]);
  });

  it("sandboxedCommand runs the command after --, its arguments untouched", () => {
    const started = sandboxedCommand({ bwrap: "/usr/bin/bwrap", network: "on", mounts: [] }, "node", ["--", "-x"], "/w");
    expect(started.command).toBe("/usr/bin/bwrap");
    expect(started.args.slice(-4)).toEqual(["--", "node", "--", "-x"]);
  });
});
