import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { AgentInstalls, type InstallEvent } from "../../src/host/agent-installs.js";
import { silentLogger } from "../../src/host/logger.js";
import { catalogueFixture } from "../agents/catalogue-fixture.js";

let fixture: ReturnType<typeof catalogueFixture>;

beforeAll(() => {
  fixture = catalogueFixture();
});

afterAll(() => {
  rmSync(fixture.root, { recursive: true, force: true });
});

describe("the host's agent installs", () => {
  it("an install whose new agent cannot be taken in (the list unreadable on re-reading) ends failed, and the agent can be installed again", async () => {
    const dataDir = mkdtempSync(join(fixture.root, "data-"));
    const installs = new AgentInstalls(
      parseConfig({ agentRegistry: fixture.registry }),
      dataDir,
      () => {
        throw new Error("the installed list cannot be read");
      },
      silentLogger(),
    );
    const { id } = await installs.start({ id: "fixture", distribution: "binary" });
    const ended = await new Promise<InstallEvent>((resolve) =>
      installs.follow(id, (event) => {
        if (event.kind !== "progress") resolve(event);
      }),
    );
    expect(ended).toEqual({ kind: "failed", reason: "the installed list cannot be read" });
    // Not running any more: the next request is checked, not refused as busy.
    await expect(installs.start({ id: "fixture", distribution: "binary" })).rejects.toThrow('agent "fixture" is already installed');
    await installs.close();
  });
});
