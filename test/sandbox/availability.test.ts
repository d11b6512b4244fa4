import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxAvailability, sandboxAvailabilityAsync } from "../../src/sandbox/availability.js";

const temp = mkdtempSync(join(tmpdir(), "berth-availability-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** A stand-in for bwrap that refuses as a kernel without user namespaces would. */
function refusingBwrap(name: string): string {
  const path = join(temp, name);
  writeFileSync(path, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
  chmodSync(path, 0o755);
  return path;
}

describe("sandboxAvailabilityAsync", () => {
  it("answers as the blocking probe does: a binary not found, one that refuses, and this machine's bwrap", async () => {
    const missing = join(temp, "no-bwrap");
    expect(await sandboxAvailabilityAsync(missing)).toEqual(sandboxAvailability(missing));
    expect(await sandboxAvailabilityAsync(missing)).toMatchObject({
      state: "unavailable",
      reason: `bubblewrap (${JSON.stringify(missing)}) was not found`,
    });
    const refusing = refusingBwrap("bwrap-refusing");
    const answer = await sandboxAvailabilityAsync(refusing);
    expect(answer).toMatchObject({
      state: "unavailable",
      reason: `${refusing} cannot create a sandbox here (bwrap: No permissions to create new namespace)`,
    });
    expect(sandboxAvailability(refusing)).toBe(answer);
    expect(await sandboxAvailabilityAsync("bwrap")).toEqual(sandboxAvailability("bwrap"));
  });

  it("probes a binary once: the blocking probe afterwards, and a second caller meanwhile, get the same answer", async () => {
    const refusing = refusingBwrap("bwrap-once");
    const [first, second] = await Promise.all([sandboxAvailabilityAsync(refusing), sandboxAvailabilityAsync(refusing)]);
    expect(second).toBe(first);
    expect(sandboxAvailability(refusing)).toBe(first);
  });
});
