import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, startFixture, tempDir, waitUntil } from "./server-harness.js";

afterEach(cleanUp);

const apiDoc = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
/** The `sh` blocks of docs/api.md are the examples meant to run as they are, in order. */
const examples = [...apiDoc.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);

describe("docs/api.md", () => {
  it("has runnable curl examples for every route", () => {
    const script = examples.join("\n");
    for (const route of [
      "/healthz",
      "/api/tickets",
      "/api/agents",
      "/api/agents/catalogue",
      "/api/sessions",
      "/api/sessions/$SESSION",
      "/api/sessions/$SESSION/events",
      "/api/locations",
      "/api/questions",
      "/api/questions/$QUESTION/answer",
      "/api/records",
      "/metrics",
      "-X PATCH",
      "/api/logins",
      "/api/logins/$LOGIN",
      "/api/token/rotate",
      "/api/terminal-logins",
      "-X DELETE",
    ]) {
      expect(script).toContain(route);
    }
  });

  it("its examples run against a live server and every request succeeds", async () => {
    const fixture = await startFixture();
    // The answer example needs a question waiting: an agent asks one.
    const asking = await fixture.berth.host.createSession({ cwd: fixture.workDir });
    const turn = fixture.berth.host.prompt(asking.id, [{ type: "text", text: "/ask Deploy to production?" }]);
    await waitUntil(() => fixture.berth.host.pendingQuestions().length === 1, "a question is pending");
    // Any HTTP error status fails the script (curl exits 22 and `set -e` stops).
    const curlHome = tempDir("berth-docs-curl-");
    writeFileSync(join(curlHome, ".curlrc"), "fail-with-body\nshow-error\n");

    const { stdout } = await promisify(execFile)("bash", ["-c", `set -euo pipefail\n${examples.join("\n")}`], {
      cwd: fixture.workDir,
      env: {
        PATH: process.env.PATH,
        HOME: curlHome,
        CURL_HOME: curlHome,
        BERTH: fixture.url,
        TOKEN: fixture.token,
        BERTH_TOKEN_FILE: join(fixture.dataDir, "token"),
      },
    });
    expect(stdout).toContain('{"status":"ok","version":"0.1.0","store":{"state":"ok","pendingWrites":');
    expect(stdout).toContain('"state": "answered"');
    expect(stdout).toContain("berth_agent_children");
    expect(stdout).toMatch(/^204$/m);
    expect(stdout).toMatch(/^Fix the login bug$/m);
    expect(stdout).toContain('{"label":"my laptop","halfLength":43}');
    expect(stdout).toContain('{"rotated":true,"devicesForgotten":0}');
    expect(stdout.trim().split("\n").at(-1)).toBe("200");
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    // The example session was created and deleted again; the asking one remains.
    expect(fixture.berth.host.listSessions().map((s) => s.id)).toEqual([asking.id]);
  });
});
