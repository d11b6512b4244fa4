import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanUp, startFixture, waitUntilGone } from "./server-harness.js";

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

describe("stopping Berth when a step fails", () => {
  it("runs every other step: the agents stop, the host file and the lock are let go, and stop() names the step", async () => {
    const fixture = await startFixture();
    const { berth, dataDir } = fixture;
    const client = await fixture.connect();
    const sessionId = await client.newSession(fixture.workDir);
    const agent = berth.host.getSession(sessionId)!.pid!;
    // The first close (the host's, before its store closes) fails; the one after the host stopped works.
    vi.spyOn(berth.server, "close").mockRejectedValueOnce(new Error("injected fault: the server did not close"));

    await expect(fixture.stop()).rejects.toThrow("Berth stopped, but these steps failed: stop the host");
    expect(await waitUntilGone([agent])).toEqual([]);
    expect(existsSync(join(dataDir, "host.json"))).toBe(false);
    expect(berth.server.close).toHaveBeenCalledTimes(2);
    // The lock is free: a new Berth starts on the same data directory and finds the session.
    const again = await startFixture({ dataDir });
    expect(again.berth.host.getSession(sessionId)).toMatchObject({ id: sessionId, state: "childless" });
  });
});
