import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolUpdates } from "../../server/server-harness.js";
import { gemini } from "./agents/gemini.js";
import { toolCalls, useDataDir, useWorld } from "./scenarios.js";
import type { World } from "./world.js";

/**
 * Issue 25, item 3 with a real agent: Gemini CLI reads and writes files through its client's `fs/*` (Berth declares
 * them to it). Through a real `berth serve`, a prompting client that declared `fs.readTextFile`/`fs.writeTextFile`
 * is asked them, as it would be directly, and its answers decide: its unsaved buffer is what Gemini replaces, and
 * the write is made by the client. A client that declared no fs gets Berth's disk.
 */

/** The `file_request` records of one session, as `method by`. */
async function fileRequests(w: World, sessionId: string): Promise<string[]> {
  const records = (await w.records()).map(({ record }) => record as typeof record & { method?: string; by?: string; path?: string });
  return records.filter((r) => r.kind === "file_request" && r.sessionId === sessionId).map((r) => `${r.method} ${r.by} ${r.path}`);
}

describe.skipIf(!gemini.available())("gemini: its fs/* through Berth", { timeout: 240_000 }, () => {
  const world = useWorld(gemini, useDataDir(gemini));

  it("a write_file is put to the prompting client that declared fs: it reads the client's buffer, and the client makes the write", async () => {
    const w = world();
    const file = join(w.cwd, "notes.txt");
    writeFileSync(file, "on disk\n");
    const tag = w.play([{ text: "Writing.", toolCalls: [gemini.writeTool(file, "written by the model\n")] }, { text: "Done." }]);
    const client = await w.connect({
      capabilities: { fs: { readTextFile: true, writeTextFile: true } },
      files: {
        read: async () => ({ content: "in the editor's unsaved buffer\n" }),
        // An editor saves what it accepted; the marker shows the client wrote it, not Berth.
        write: async (params) => {
          writeFileSync(params.path, `${params.content}(saved by the editor)\n`);
          return {};
        },
      },
    });
    const sessionId = await client.newSession(w.cwd);

    expect((await client.prompt(sessionId, `${tag} write the notes`)).stopReason).toBe("end_turn");

    expect(toolCalls(client, sessionId).map((c) => c.status)).toEqual(["completed"]);
    // One read, then the write, each with Berth's session id and the real path; the write carries the model's content.
    expect(client.fileRequests).toEqual([
      { method: "fs/read_text_file", params: { sessionId, path: file } },
      { method: "fs/write_text_file", params: { sessionId, path: file, content: "written by the model\n" } },
    ]);
    expect(readFileSync(file, "utf8")).toBe("written by the model\n(saved by the editor)\n");
    // What Gemini replaced is the client's buffer, not the disk: the diff it shows starts from it.
    const diff = toolUpdates(client, sessionId)
      .flatMap((u) => u.content ?? [])
      .find((c) => c.type === "diff");
    expect(diff).toMatchObject({ type: "diff", path: file, oldText: "in the editor's unsaved buffer\n", newText: "written by the model\n" });
    await w.waitFor("the write was recorded", async () => (await fileRequests(w, sessionId)).length === 2);
    expect(await fileRequests(w, sessionId)).toEqual([`fs/read_text_file client ${file}`, `fs/write_text_file client ${file}`]);
  });

  it("a client that declared no fs: Gemini's reads and write go to the disk, and no file request is recorded", async () => {
    const w = world();
    const file = join(w.cwd, "plain.txt");
    writeFileSync(file, "on disk\n");
    const tag = w.play([{ text: "Writing.", toolCalls: [gemini.writeTool(file, "written by the model\n")] }, { text: "Done." }]);
    const client = await w.connect({ capabilities: {} });
    const sessionId = await client.newSession(w.cwd);

    expect((await client.prompt(sessionId, `${tag} write the notes`)).stopReason).toBe("end_turn");

    expect(toolCalls(client, sessionId).map((c) => c.status)).toEqual(["completed"]);
    expect(readFileSync(file, "utf8")).toBe("written by the model\n");
    const diff = toolUpdates(client, sessionId)
      .flatMap((u) => u.content ?? [])
      .find((c) => c.type === "diff");
    expect(diff).toMatchObject({ type: "diff", path: file, oldText: "on disk\n", newText: "written by the model\n" });
    expect(client.fileRequests).toEqual([]);
    expect(await fileRequests(w, sessionId)).toEqual([]);
  });
});
