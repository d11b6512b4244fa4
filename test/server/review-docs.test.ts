import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { initRepository, writeIn } from "../git/git-repository.js";
import { cleanUp, startFixture, tempDir, waitUntil } from "./server-harness.js";

afterEach(cleanUp);

const reviewDoc = readFileSync(new URL("../../docs/review.md", import.meta.url), "utf8");
/** The `sh` blocks of docs/review.md are the examples meant to run as they are, in order. */
const examples = [...reviewDoc.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
/** The `json` and `text` blocks right after an example: what it prints. */
const shown = (start: string) => {
  const from = reviewDoc.indexOf(start);
  return /```(?:json|text)\n([\s\S]*?)```/.exec(reviewDoc.slice(from))![1]!;
};

describe("docs/review.md", () => {
  it("its examples run against a live server with a session in a git repository, and print what the page shows", async () => {
    const fixture = await startFixture();
    const repo = tempDir("berth-review-docs-");
    initRepository(repo, { "greeting.txt": "hello\n" });
    writeIn(repo, "greeting.txt", "hello, world\n");
    writeIn(repo, "notes.md", "# Notes\n- ship on Friday\n");
    const session = await fixture.berth.host.createSession({ cwd: repo });
    // Any HTTP error status fails the script (curl exits 22 and `set -e` stops).
    const curlHome = tempDir("berth-review-docs-curl-");
    writeFileSync(join(curlHome, ".curlrc"), "fail-with-body\nshow-error\n");

    const { stdout } = await promisify(execFile)("bash", ["-c", `set -euo pipefail\n${examples.join("\n")}`], {
      cwd: repo,
      env: { PATH: process.env.PATH, HOME: curlHome, CURL_HOME: curlHome, BERTH: fixture.url, TOKEN: fixture.token, SESSION: session.id },
    });
    const changes = JSON.parse(shown("### `GET /api/sessions/:id/changes`")) as { files: unknown; totals: unknown };
    expect(stdout).toContain(JSON.stringify({ files: changes.files, totals: changes.totals }, null, 2).slice(2, -2));
    expect(stdout).toContain(shown("### `GET /api/sessions/:id/changes/file").split('"oldText"')[1]!.split("\n}")[0]);
    expect(stdout).toContain(shown("### `POST /api/sessions/:id/comments`"));
    expect(stdout).toContain("Say who is greeted, e.g. the user by name\n");
    expect(stdout).toContain(shown("### `POST /api/sessions/:id/comments/send`"));
    // The turn the comments started runs on: it ends before the fixture stops.
    await waitUntil(() => fixture.berth.host.events(session.id).some((event) => event.kind === "turn_ended"), "the review's turn ended");
  });
});
