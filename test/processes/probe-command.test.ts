import { describe, expect, it } from "vitest";
import { settle, settleSync, type Probing } from "../../src/processes/probe-command.js";
import { withBusyProgram, withHeldPipes } from "../support/hostile-commands.js";
import { groupMembers, killLeftovers, waitUntil } from "../support/process-table.js";

/** A probe whose answer is what its command's run was: exit status, stderr and error as both runners report them. */
function shellProbe(script: string, timeoutMs = 5_000): Probing<{ status: number | null; stderr: string; error?: string }> {
  return {
    run: { command: "/bin/sh", args: ["-c", script], timeoutMs },
    finish: (ran) => ({ status: ran.status, stderr: ran.stderr, ...(ran.error ? { error: ran.error.message } : {}) }),
  };
}

describe("settle and settleSync", () => {
  it("give an answer known already without running anything", async () => {
    expect(settleSync({ answer: 7 })).toBe(7);
    expect(await settle({ answer: 7 })).toBe(7);
  });

  it("report the same exit status and stderr, blocking or not", async () => {
    const probe = shellProbe("echo refused >&2; exit 3");
    expect(await settle(probe)).toEqual({ status: 3, stderr: "refused\n" });
    expect(settleSync(probe)).toEqual({ status: 3, stderr: "refused\n" });
    expect(await settle(shellProbe("exit 0"))).toEqual({ status: 0, stderr: "" });
  });

  it("report a command that cannot start, and one that outlives its timeout, as failed with an error", async () => {
    const missing: Probing<string> = {
      run: { command: "/nonexistent/berth-probe", args: [], timeoutMs: 5_000 },
      finish: (ran) => `${ran.status} ${ran.error?.message}`,
    };
    expect(await settle(missing)).toBe("null spawn /nonexistent/berth-probe ENOENT");
    expect(settleSync(missing)).toBe("null spawnSync /nonexistent/berth-probe ENOENT");
    const slow = shellProbe("exec sleep 30", 100);
    expect(await settle(slow)).toEqual({ status: null, stderr: "", error: "spawn /bin/sh ETIMEDOUT" });
    expect(settleSync(slow)).toEqual({ status: null, stderr: "", error: "spawnSync /bin/sh ETIMEDOUT" });
  });

  it("stop an overrunning command's whole process group, not the command alone, when not blocking", async () => {
    // The shell leads its own group and says its pid (the group's id), then leaves a child behind in that group.
    const ran = await settle(shellProbe("echo $$ >&2; sleep 30 >/dev/null 2>&1 & exec sleep 30", 300));
    const group = Number(ran.stderr.trim());
    expect(ran.error).toBe("spawn /bin/sh ETIMEDOUT");
    expect(group).toBeGreaterThan(1);
    try {
      await waitUntil(() => groupMembers(group).length === 0, "the probe's whole group is gone", 5_000);
    } finally {
      killLeftovers(groupMembers(group));
    }
  });

  it("end at the timeout when the command is gone but something of its own session holds its stderr, as spawnSync does", async () => {
    const ran = await withHeldPipes((script) => settle(shellProbe(script, 1_000)));
    expect(ran).toEqual({ status: null, stderr: "", error: "spawn /bin/sh ETIMEDOUT" });
  });

  it("report an error spawn throws (a program open for writing: ETXTBSY) as the run's, as spawnSync does", async () => {
    await withBusyProgram(async (program) => {
      const probe: Probing<string> = {
        run: { command: program, args: [], timeoutMs: 5_000 },
        finish: (ran) => `${ran.status} ${(ran.error as NodeJS.ErrnoException | undefined)?.code}`,
      };
      expect(await settle(probe)).toBe("null ETXTBSY");
      expect(settleSync(probe)).toBe("null ETXTBSY");
    });
  });

  it("end a command that writes past spawnSync's buffer with ENOBUFS, blocking or not", async () => {
    const probe = shellProbe("head -c 2000000 /dev/zero >&2", 5_000);
    expect(await settle(probe)).toMatchObject({ status: null, error: "spawn /bin/sh ENOBUFS" });
    expect(settleSync(probe)).toMatchObject({ status: null, error: "spawnSync /bin/sh ENOBUFS" });
  });
});
