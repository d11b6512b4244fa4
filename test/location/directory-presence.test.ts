import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DIRECTORY_LOOK_TIMEOUT_MS, lookAtDirectory, MAX_HUNG_LOOKS } from "../../src/location/directory-presence.js";

vi.mock("node:fs/promises", async (original) => ({ ...(await original<typeof import("node:fs/promises")>()) }));

describe("looking at a directory", () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("finds a directory, and calls a file or nothing at all missing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-directory-presence-"));
    dirs.push(dir);
    writeFileSync(join(dir, "file"), "");
    expect(await lookAtDirectory(dir)).toBe("directory");
    expect(await lookAtDirectory(join(dir, "file"))).toBe("missing");
    expect(await lookAtDirectory(join(dir, "absent"))).toBe("missing");
  });

  it("gives up on a file system that does not answer (a hung network mount) after the timeout; looks at one path share one stat", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    // What a hung NFS mount does to stat: it returns only when the mount does.
    let mountBack: (() => void) | undefined;
    const stat = vi
      .spyOn(fs, "stat")
      .mockImplementation(() => new Promise((_resolve, reject) => (mountBack = () => reject(new Error("ESTALE")))) as ReturnType<typeof fs.stat>);
    let found: string | undefined;
    void lookAtDirectory("/mnt/hung").then((presence) => (found = presence));
    const second = lookAtDirectory("/mnt/hung");
    await vi.advanceTimersByTimeAsync(DIRECTORY_LOOK_TIMEOUT_MS - 1);
    expect(found).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(found).toBe("unanswered");
    expect(await second).toBe("unanswered");
    // While the first stat hangs, a later look at the path answers at once, with no other stat.
    expect(await lookAtDirectory("/mnt/hung")).toBe("unanswered");
    expect(stat).toHaveBeenCalledTimes(1);
    mountBack!();
    await vi.advanceTimersByTimeAsync(0);
  });

  it("starts no new look while a few still hang (each holds a thread file I/O and DNS share), and again once they return", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const returns: Array<() => void> = [];
    const stat = vi
      .spyOn(fs, "stat")
      .mockImplementation(() => new Promise((_resolve, reject) => returns.push(() => reject(new Error("ENOENT")))) as ReturnType<typeof fs.stat>);
    const hanging = Array.from({ length: MAX_HUNG_LOOKS }, (_, i) => lookAtDirectory(`/mnt/hung-${i}`));
    await vi.advanceTimersByTimeAsync(DIRECTORY_LOOK_TIMEOUT_MS);
    expect(await Promise.all(hanging)).toEqual(hanging.map(() => "unanswered"));
    expect(await lookAtDirectory("/mnt/other")).toBe("unanswered");
    expect(stat).toHaveBeenCalledTimes(MAX_HUNG_LOOKS);
    // The mounts answer: looks start again.
    for (const back of returns.splice(0)) back();
    await vi.advanceTimersByTimeAsync(0);
    const again = lookAtDirectory("/mnt/other");
    expect(stat).toHaveBeenCalledTimes(MAX_HUNG_LOOKS + 1);
    for (const back of returns.splice(0)) back();
    expect(await again).toBe("missing");
  });
});
