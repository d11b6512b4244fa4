import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BerthProcess } from "../server/serve-process.js";
import { AcpTestClient } from "../server/server-harness.js";
import { waitUntil } from "../support/process-table.js";

/**
 * Issue 9 item 9: after a SIGKILL of the host, pending questions become `orphaned` (the agent
 * process that waits for the answer died with the host). That is now said in the conversation:
 * the next load of the session shows "the agent stopped before you answered", the turn as ended,
 * and the turn's prompt in `_meta["berth/notice"].rerun` so a client can offer to send it again.
 */

const temps: string[] = [];
const hosts: BerthProcess[] = [];

afterEach(() => {
  for (const host of hosts.splice(0)) host.killGroup();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

function serve(dataDir: string): BerthProcess {
  const berth = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: dataDir });
  hosts.push(berth);
  return berth;
}

describe("a question pending when the host is killed", () => {
  it("is orphaned, and the conversation says so when the session is next loaded, offering the turn again", async () => {
    const dataDir = tempDir("berth-orphan-data-");
    const workDir = tempDir("berth-orphan-work-");
    const first = serve(dataDir);
    const { token, acpUrl } = await first.startupLine();
    const client = await AcpTestClient.connect(acpUrl, { token });
    const sessionId = await client.newSession(workDir);
    void client.prompt(sessionId, "/ask May I deploy to production?").catch(() => undefined);
    await waitUntil(() => client.permissions.length === 1, "the agent asked");

    first.signal("SIGKILL");
    await first.exited;
    await client.close();

    const second = serve(dataDir);
    const next = await second.startupLine();
    const response = await fetch(`${next.url}/api/questions?sessionId=${sessionId}`, { headers: { authorization: `Bearer ${next.token}` } });
    expect(((await response.json()) as { questions: unknown[] }).questions).toEqual([]);

    const later = await AcpTestClient.connect(next.acpUrl, { token: next.token });
    await later.load(sessionId, workDir);
    expect(later.texts(sessionId)).toContain("The agent stopped before you answered");
    expect(later.texts(sessionId)).toContain("Send your last prompt again to re-run the turn.");
    const notice = later.notifications.find(
      (n) => n.update._meta?.["berth/notice"] !== undefined && JSON.stringify(n.update._meta).includes("question_orphaned"),
    );
    expect(notice?.update._meta?.["berth/notice"]).toMatchObject({
      kind: "question_orphaned",
      questionIds: [expect.any(String)],
      rerun: { prompt: [{ type: "text", text: "/ask May I deploy to production?" }] },
    });
    // The session goes on: the turn is over, a new prompt runs on a fresh agent.
    await later.prompt(sessionId, "hello again");
    await later.waitForText(sessionId, "hello again");
    await later.close();
    second.signal("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
