import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DIRECTORY_LOOK_TIMEOUT_MS, lookAtDirectory } from "../../src/location/directory-presence.js";

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

  it("gives up on a file system that does not answer (a hung network mount), after the timeout", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    // What a hung NFS mount does to stat: it never returns.
    vi.spyOn(fs, "stat").mockImplementation(() => new Promise(() => undefined));
    let found: string | undefined;
    void lookAtDirectory("/mnt/hung").then((presence) => (found = presence));
    await vi.advanceTimersByTimeAsync(DIRECTORY_LOOK_TIMEOUT_MS - 1);
    expect(found).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(found).toBe("unanswered");
  });
});
