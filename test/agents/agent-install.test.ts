import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InstallError, installAgent } from "../../src/agents/agent-install.js";
import { platformKey, readCatalogue } from "../../src/agents/catalogue.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A download server on loopback that takes each request and never answers it. */
async function silentServer(): Promise<{ url: string; asked: () => number }> {
  const waiting: ServerResponse[] = [];
  const server: Server = createServer((_request, response) => void waiting.push(response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const response of waiting) response.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked: () => waiting.length };
}

describe("an install's steps are limited in time", () => {
  it("a download that never answers is stopped at the step's limit, the install fails naming it and leaves nothing", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "berth-install-limit-")));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const { url, asked } = await silentServer();
    const archive = `${url}/agent.tar.gz`;
    const registry = join(root, "registry.json");
    writeFileSync(
      registry,
      JSON.stringify({
        version: "1.0.0",
        agents: [
          { id: "stalled", name: "Stalled", version: "1.0.0", distribution: { binary: { [platformKey()]: { archive, cmd: "./bin/agent" } } } },
        ],
      }),
    );
    const dataDir = join(root, "data");
    const install = installAgent({
      dataDir,
      catalogue: await readCatalogue(registry),
      id: "stalled",
      mode: "add",
      progress: () => {},
      // Long enough for the request to reach the server on a loaded machine (it is counted below), short for a test.
      stepLimitMs: 2_000,
    });
    const failure = await install.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(asked()).toBe(1);
    expect(failure).toBeInstanceOf(InstallError);
    expect((failure as Error).message).toBe(`downloading ${archive} took longer than 2s: stopped`);
    expect(readdirSync(dataDir)).toEqual(["agents"]);
    expect(readdirSync(join(dataDir, "agents"))).toEqual([]);
  });
});
