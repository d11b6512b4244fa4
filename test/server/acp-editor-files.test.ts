import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { HostRecord } from "../../src/host/host-records.js";
import { initRepository } from "../git/git-repository.js";
import { ChangeEventReader, changedPaths } from "./change-events.js";
import { cleanUp, startFixture, tempDir, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

type FileRecord = Extract<HostRecord, { kind: "file_request" }>;

async function fileRecords(fixture: BerthFixture): Promise<FileRecord[]> {
  await fixture.berth.host.committed();
  return fixture.berth.host
    .recentRecords(1000)
    .map(({ record }) => record)
    .filter((record): record is FileRecord => record.kind === "file_request");
}

const editorCapabilities = { fs: { readTextFile: true, writeTextFile: true } };

/** A request that is never answered: the server withdraws it (or the connection closes). */
function unanswered<T>(signal: AbortSignal): Promise<T> {
  return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("withdrawn")), { once: true }));
}

/** A repository with `notes.txt` committed, as the disk has it. */
function project(): string {
  const dir = tempDir("berth-editor-files-");
  initRepository(dir, { "notes.txt": "on disk\n" });
  return dir;
}

describe("the agent's fs/* go to the client that sent the prompt, when it declared fs", () => {
  it("reads its buffer and writes through it, not the disk; the record says so and the changes view sees the saved file", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir });
    const editor = await fixture.connect({
      capabilities: editorCapabilities,
      files: {
        read: async () => ({ content: "in the editor's unsaved buffer\n" }),
        // An editor saves what it accepted; the marker shows the editor wrote it, not Berth.
        write: async ({ path, content }) => {
          writeFileSync(path, `${content} (saved by the editor)\n`);
          return {};
        },
      },
    });
    const sessionId = await editor.newSession(dir);

    await editor.prompt(sessionId, `/read ${join(dir, "notes.txt")}`);
    expect(editor.texts(sessionId)).toContain(`Contents of ${join(dir, "notes.txt")}:\nin the editor's unsaved buffer`);
    // Berth's session id, the only one the client knows.
    expect(editor.fileRequests).toEqual([{ method: "fs/read_text_file", params: { sessionId, path: join(dir, "notes.txt") } }]);

    const changes = new ChangeEventReader(await fixture.api(`/api/sessions/${sessionId}/changes/events`));
    await changes.until((events) => events.length === 1);
    await editor.prompt(sessionId, `/write ${join(dir, "todo.md")} ship it`);
    expect(editor.texts(sessionId)).toContain(`Wrote 7 characters to ${join(dir, "todo.md")}`);
    expect(readFileSync(join(dir, "todo.md"), "utf8")).toBe("ship it (saved by the editor)\n");
    await changes.until((events) => events.some((event) => changedPaths(event).includes("todo.md")));
    await changes.close();

    expect(await fileRecords(fixture)).toEqual([
      { kind: "file_request", sessionId, method: "fs/read_text_file", path: join(dir, "notes.txt"), by: "client" },
      { kind: "file_request", sessionId, method: "fs/write_text_file", path: join(dir, "todo.md"), by: "client" },
    ]);
  });

  it("the disk answers for a client that declared no fs, and an editor holding the session that did not prompt is not asked", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir });
    const plain = await fixture.connect({ capabilities: {} });
    const sessionId = await plain.newSession(dir);
    const editor = await fixture.connect({ capabilities: editorCapabilities, files: { read: async () => ({ content: "the editor's\n" }) } });
    await editor.load(sessionId, dir);

    await plain.prompt(sessionId, `/read ${join(dir, "notes.txt")}`);
    expect(plain.texts(sessionId)).toContain(`Contents of ${join(dir, "notes.txt")}:\non disk`);
    await editor.waitForText(sessionId, "on disk");
    expect(editor.fileRequests).toEqual([]);
    expect(await fileRecords(fixture)).toEqual([]);
  });

  it("a path outside the session's directories is refused before any client is asked", async () => {
    const dir = project();
    const outside = join(tempDir("berth-editor-outside-"), "secret.txt");
    const fixture = await startFixture({ workDir: dir });
    const editor = await fixture.connect({ capabilities: editorCapabilities, files: { read: async () => ({ content: "leaked\n" }) } });
    const sessionId = await editor.newSession(dir);

    await editor.prompt(sessionId, `/read ${outside}`);
    expect(editor.texts(sessionId)).toContain(
      `Could not read ${outside}: Invalid params: path ${JSON.stringify(outside)} is outside the session's directories (${dir})`,
    );
    expect(editor.fileRequests).toEqual([]);
  });

  it("the client is given the real path checked, not the agent's: `link/..` cannot lead it outside", async () => {
    const dir = project();
    const outside = tempDir("berth-editor-outside-");
    mkdirSync(join(outside, "inner"));
    writeFileSync(join(outside, "secret.txt"), "the secret\n");
    // The agent's link out; `link/../secret.txt` is dir/secret.txt as text but outside/secret.txt to the kernel.
    symlinkSync(join(outside, "inner"), join(dir, "link"));
    writeFileSync(join(dir, "secret.txt"), "a decoy\n");
    const fixture = await startFixture({ workDir: dir });
    const editor = await fixture.connect({
      capabilities: editorCapabilities,
      files: {
        // An editor resolves the path as the kernel does.
        read: async ({ path }) => ({ content: readFileSync(path, "utf8") }),
        write: async ({ path, content }) => {
          writeFileSync(path, content);
          return {};
        },
      },
    });
    const sessionId = await editor.newSession(dir);
    // Not join(): it would tidy the `..` away.
    const tricky = `${dir}/link/../secret.txt`;

    await editor.prompt(sessionId, `/read ${tricky}`);
    expect(editor.texts(sessionId)).toContain(`Contents of ${tricky}:\na decoy`);
    await editor.prompt(sessionId, `/write ${tricky} overwritten`);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("the secret\n");
    expect(readFileSync(join(dir, "secret.txt"), "utf8")).toBe("overwritten");
    expect(editor.fileRequests).toEqual([
      { method: "fs/read_text_file", params: { sessionId, path: join(dir, "secret.txt") } },
      { method: "fs/write_text_file", params: { sessionId, path: join(dir, "secret.txt"), content: "overwritten" } },
    ]);
  });

  it("the client's own refusal reaches the agent as it would directly, and nothing is written", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir });
    const editor = await fixture.connect({
      capabilities: editorCapabilities,
      files: {
        write: async () => {
          throw new RequestError(-32042, "the user rejected the edit");
        },
      },
    });
    const sessionId = await editor.newSession(dir);

    await editor.prompt(sessionId, `/write ${join(dir, "todo.md")} ship it`);
    expect(editor.texts(sessionId)).toContain(`Could not write ${join(dir, "todo.md")}: the user rejected the edit`);
    expect(existsSync(join(dir, "todo.md"))).toBe(false);
    expect(await fileRecords(fixture)).toEqual([
      { kind: "file_request", sessionId, method: "fs/write_text_file", path: join(dir, "todo.md"), by: "client" },
    ]);
  });
});

describe("the disk answers when the prompting client cannot", () => {
  it("a client silent past clientFileTimeout: its request is withdrawn and the disk answers", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir, config: { clientFileTimeout: "300ms" } });
    const withdrawn: AbortSignal[] = [];
    const editor = await fixture.connect({
      capabilities: editorCapabilities,
      files: {
        read: (_params, signal) => {
          withdrawn.push(signal);
          return unanswered(signal);
        },
      },
    });
    const sessionId = await editor.newSession(dir);

    await editor.prompt(sessionId, `/read ${join(dir, "notes.txt")}`);
    expect(editor.texts(sessionId)).toContain(`Contents of ${join(dir, "notes.txt")}:\non disk`);
    await expect.poll(() => withdrawn.map((signal) => signal.aborted)).toEqual([true]);
    expect(await fileRecords(fixture)).toEqual([
      { kind: "file_request", sessionId, method: "fs/read_text_file", path: join(dir, "notes.txt"), by: "disk", why: "timeout" },
    ]);
  });

  it("a write the client has not answered within clientFileTimeout is not made: it is withdrawn and the agent told", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir, config: { clientFileTimeout: "300ms" } });
    const withdrawn: AbortSignal[] = [];
    const editor = await fixture.connect({
      capabilities: editorCapabilities,
      files: {
        // An editor still showing the edit to its user.
        write: (_params, signal) => {
          withdrawn.push(signal);
          return unanswered(signal);
        },
      },
    });
    const sessionId = await editor.newSession(dir);
    const path = join(dir, "todo.md");

    await editor.prompt(sessionId, `/write ${path} ship it`);
    expect(editor.texts(sessionId)).toContain(
      `Could not write ${path}: Internal error: the client whose prompt this turn runs did not answer the write of ${JSON.stringify(path)} within clientFileTimeout (300ms); nothing was written`,
    );
    expect(existsSync(path)).toBe(false);
    await expect.poll(() => withdrawn.map((signal) => signal.aborted)).toEqual([true]);
    expect(await fileRecords(fixture)).toEqual([{ kind: "file_request", sessionId, method: "fs/write_text_file", path, by: "none", why: "timeout" }]);
  });

  it("a client that declared fs but does not handle it (-32601): the disk writes", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir });
    const editor = await fixture.connect({ capabilities: editorCapabilities });
    const sessionId = await editor.newSession(dir);

    await editor.prompt(sessionId, `/write ${join(dir, "todo.md")} ship it`);
    expect(readFileSync(join(dir, "todo.md"), "utf8")).toBe("ship it");
    expect(await fileRecords(fixture)).toEqual([
      { kind: "file_request", sessionId, method: "fs/write_text_file", path: join(dir, "todo.md"), by: "disk", why: "client_lacks" },
    ]);
  });

  it("a client that leaves while it is asked: the disk answers and the turn goes on for the others", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir });
    const editor = await fixture.connect({
      capabilities: editorCapabilities,
      files: {
        read: (_params, signal) => {
          void editor.close();
          return unanswered(signal);
        },
      },
    });
    const sessionId = await editor.newSession(dir);
    const watcher = await fixture.connect({ capabilities: {} });
    await watcher.load(sessionId, dir);

    void editor.prompt(sessionId, `/read ${join(dir, "notes.txt")}`).catch(() => undefined);
    await watcher.waitForText(sessionId, `Contents of ${join(dir, "notes.txt")}:\non disk`);
    expect(await fileRecords(fixture)).toEqual([
      { kind: "file_request", sessionId, method: "fs/read_text_file", path: join(dir, "notes.txt"), by: "disk", why: "client_gone" },
    ]);
  });

  it("a client that leaves while it is asked to write: nothing is written and the agent is told", async () => {
    const dir = project();
    const fixture = await startFixture({ workDir: dir });
    const editor = await fixture.connect({
      capabilities: editorCapabilities,
      files: {
        write: (_params, signal) => {
          void editor.close();
          return unanswered(signal);
        },
      },
    });
    const sessionId = await editor.newSession(dir);
    const watcher = await fixture.connect({ capabilities: {} });
    await watcher.load(sessionId, dir);
    const path = join(dir, "todo.md");

    void editor.prompt(sessionId, `/write ${path} ship it`).catch(() => undefined);
    await watcher.waitForText(
      sessionId,
      `Could not write ${path}: Internal error: the client whose prompt this turn runs left before answering the write of ${JSON.stringify(path)}; nothing was written`,
    );
    expect(existsSync(path)).toBe(false);
    expect(await fileRecords(fixture)).toEqual([
      { kind: "file_request", sessionId, method: "fs/write_text_file", path, by: "none", why: "client_gone" },
    ]);
  });
});
