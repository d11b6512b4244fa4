// Placement by directory (docs/fleet.md, "Placement"): two real `berth serve --store postgres://…` processes that see
// different file systems. Host B runs in a mount namespace of its own where one directory tree is hidden under an
// empty tmpfs (what a second machine without that checkout is); host A sees it. A client of B creating a session in
// that tree gets it on A (so does one in a worktree of a repository in that tree); one in a directory both see gets it
// on B, the host it connected to; one nowhere is refused.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";
import { initRepository } from "../git/git-repository.js";
import { AcpClient, FleetTestBed, getJson } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

/** A private mount namespace with a tmpfs in it needs root (CI runs as root); elsewhere the test says why it skipped. */
const canHideDirectories = spawnSync("unshare", ["--mount", "sh", "-c", 'mount -t tmpfs berth-test-probe "$0"', tmpdir()]).status === 0;

describe.skipIf(!canHideDirectories)("placement of a new session on the host that has its directory", () => {
  it("places a session on the one host that has its directory, else on the host the client connected to", async () => {
    const storeUrl = await postgres.freshDatabase();
    const hidden = bed.tempDir("berth-placement-only-on-a-");
    const onlyOnA = join(hidden, "checkout");
    mkdirSync(onlyOnA);
    const shared = bed.tempDir("berth-placement-shared-");
    const demo = { command: process.execPath, args: [demoAgentMain, "--state-dir", bed.tempDir("berth-placement-agent-")] };
    const fleet = { heartbeatInterval: "250ms", hostTtl: "6s", secret: "placement-test-secret-0123456789" };
    const a = await bed.serve(storeUrl, "host-a", bed.tempDir("berth-placement-a-"), { fleet, agents: { demo } });
    // B's own mount namespace (private propagation: the tmpfs never reaches the machine), gone with B; and an agent A has not.
    const hideFromB = ["unshare", "--mount", "sh", "-c", 'mount -t tmpfs berth-test-hidden "$0" && exec "$@"', hidden];
    const b = await bed.serve(
      storeUrl,
      "host-b",
      bed.tempDir("berth-placement-b-"),
      { fleet, agents: { demo, "only-on-b": demo } },
      { wrapper: hideFromB },
    );

    // What each host says of the directory (the route peers ask).
    const found = async (host: { url: string; token: string }, path: string) =>
      (await getJson<{ found: string; agents: string[] }>(host.url, host.token, `/api/directory?path=${encodeURIComponent(path)}`)).body;
    expect(await found(a, onlyOnA)).toEqual({ path: onlyOnA, found: "directory", agents: ["demo"] });
    expect((await found(b, onlyOnA)).found).toBe("missing");
    expect((await getJson<{ error: string }>(b.url, b.token, "/api/directory?path=relative/dir")).status).toBe(400);

    const onB = new AcpClient(b.acpUrl, b.token);
    try {
      await onB.initialize();
      // Only A has it: created on A through B, and prompted there through B.
      const placed = await onB.newSession(onlyOnA);
      const onAView = await getJson<{ host: string; cwd: string }>(a.url, a.token, `/api/sessions/${placed}`);
      expect(onAView.body).toMatchObject({ host: "host-a", cwd: onlyOnA });
      expect((await onB.prompt(placed, "hello")).stopReason).toBe("end_turn");
      expect(onB.texts.get(placed)).toContain("hello");
      // B's log comes through its stderr, not the client's socket: waited for.
      const placedLog = () => b.server.logLines().find((line) => line.msg === "client created a session on another host of the fleet");
      await waitUntil(() => placedLog() !== undefined, "B logged where it placed the session");
      expect(placedLog()).toMatchObject({ sessionId: placed, host: "host-a", placedBy: "directory" });

      // Written another way (made canonical as a session's directory is), the same directory.
      const again = await onB.newSession(`${onlyOnA}/./`);
      expect((await getJson<{ host: string; cwd: string }>(a.url, a.token, `/api/sessions/${again}`)).body).toMatchObject({
        host: "host-a",
        cwd: onlyOnA,
      });

      // Only A has it, but not the agent the client names: refused, naming the host that has the directory.
      const refused = onB.agent.request(methods.agent.session.new, { cwd: onlyOnA, mcpServers: [], _meta: { "berth/agent": "only-on-b" } });
      await expect(refused).rejects.toMatchObject({ code: -32602, data: { code: "agent_unknown" }, message: expect.stringContaining('"host-a"') });

      // A worktree session: its repository plays the directory's part (its cwd, here, both have).
      initRepository(onlyOnA);
      const inWorktree = await onB.agent.request(methods.agent.session.new, {
        cwd: shared,
        mcpServers: [],
        _meta: { "berth/worktree": { repository: onlyOnA } },
      });
      const worktreeView = await getJson<{ host: string; cwd: string; worktree: { repository: string; path: string } }>(
        a.url,
        a.token,
        `/api/sessions/${inWorktree.sessionId}`,
      );
      expect(worktreeView.body).toMatchObject({ host: "host-a", worktree: { repository: onlyOnA, path: worktreeView.body.cwd } });

      // Both have it: the host the client connected to.
      const here = await onB.newSession(shared);
      expect((await getJson<{ host: string }>(b.url, b.token, `/api/sessions/${here}`)).body.host).toBe("host-b");

      // No host has it: refused by the host the client connected to, naming the directory.
      const nowhere = join(shared, "no-such-checkout");
      await expect(onB.newSession(nowhere)).rejects.toMatchObject({ message: expect.stringContaining(nowhere) });
    } finally {
      onB.close();
    }
  }, 120_000);
});
