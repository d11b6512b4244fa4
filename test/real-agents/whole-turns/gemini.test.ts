import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gate } from "../../support/model-endpoint/script.js";
import { gemini } from "./agents/gemini.js";
import { describeWholeTurns, toolCalls, useDataDir, useWorld } from "./scenarios.js";

describeWholeTurns(gemini);

/** What Gemini CLI does instead where it cannot do a scenario (its descriptor's `cannot`), as observed. */
describe.skipIf(!gemini.available())("gemini: what it does instead", { timeout: 240_000 }, () => {
  const world = useWorld(gemini, useDataDir(gemini));

  it("write_file to a new file fails through Berth's fs/*, and a command's output reaches the model but not the transcript", async () => {
    const w = world();
    const file = join(w.cwd, "gemini-new.txt");
    const tag = w.play([
      { text: "Writing.", toolCalls: [gemini.writeTool(file, "hello\n")] },
      { text: "Running.", toolCalls: [gemini.shellTool("echo ran > gemini-marker.txt && echo command-output-77")] },
      { text: "Done." },
    ]);
    const client = await w.connect();
    const sessionId = await client.newSession(w.cwd);

    expect((await client.prompt(sessionId, `${tag} write and run`)).stopReason).toBe("end_turn");

    expect(existsSync(file)).toBe(false);
    const [write, run] = toolCalls(client, sessionId);
    expect(write).toMatchObject({ status: "failed" });
    expect(write!.output).toContain("Error checking existing file");
    expect(write!.output).toContain("does not exist");
    // The command ran and the model was sent its output; the client was shown none of it.
    expect(existsSync(join(w.cwd, "gemini-marker.txt"))).toBe(true);
    expect(run).toMatchObject({ status: "completed", output: "" });
    expect(w.requestsOf(tag)[2]!.toolResults.at(-1)?.output).toContain("command-output-77");
  });

  it("after a restart of Berth, a session whose first turn was cut short loads from the journal, its agent starting afresh", async () => {
    const w = world();
    const held = gate();
    const tag = w.play([{ text: "Working on it.", hold: held.opened }]);
    const client = await w.connect();
    const sessionId = await client.newSession(w.cwd);
    const turn = client.prompt(sessionId, `${tag} remember the word lighthouse`);
    await w.waitForText(client, sessionId, "Working on it.");

    expect(await w.stopBerth(), w.berthErrors()).toEqual({ code: 0, signal: null });
    expect((await turn).stopReason).toBe("cancelled");
    held.open();
    await w.restartBerth();

    expect((await w.sessions()).map((s) => s.id)).toContain(sessionId);
    const later = await w.connect();
    await later.load(sessionId, w.cwd);
    await w.waitForText(later, sessionId, "Berth: the agent could not reopen this session (");
  });
});
