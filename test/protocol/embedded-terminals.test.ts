import { describe, expect, it } from "vitest";
import { EXITED_TERMINALS_KEPT, EXITED_TERMINALS_NAMED, EmbeddedTerminals } from "../../src/protocol/embedded-terminals.js";

/** The `_meta` of the updates an agent sends for one command it runs itself: announced, its output, its exit. */
function commandRun(terminals: EmbeddedTerminals, terminalId: string, output: string, exitCode: number | null): void {
  terminals.absorb({ terminal_info: { terminal_id: terminalId } });
  terminals.absorb({ terminal_output: { terminal_id: terminalId, data: output } });
  if (exitCode !== null) terminals.absorb({ terminal_exit: { terminal_id: terminalId, exit_code: exitCode, signal: null } });
}

describe("EmbeddedTerminals", () => {
  it("keeps each terminal's output tail within the limit, cut at a whole character, and how it exited", () => {
    const terminals = new EmbeddedTerminals(7);
    terminals.absorb({ terminal_info: { terminal_id: "t" } });
    terminals.absorb({ terminal_output: { terminal_id: "t", data: "abc" } });
    expect(terminals.find("t")).toEqual({ output: "abc", truncated: false, exit: null });
    // "é" is two bytes: the cut may not split it.
    terminals.absorb({ terminal_output: { terminal_id: "t", data: "déf-éé" } });
    expect(terminals.find("t")).toEqual({ output: "f-éé", truncated: true, exit: null });
    terminals.absorb({ terminal_exit: { terminal_id: "t", exit_code: 2, signal: null } });
    expect(terminals.find("t")).toMatchObject({ output: "f-éé", exit: { exitCode: 2, signal: null } });
    expect(terminals.find("never-announced")).toBeUndefined();
  });

  it(`keeps the output of the ${EXITED_TERMINALS_KEPT} latest exited terminals and of every running one, however many commands ran`, () => {
    const terminals = new EmbeddedTerminals(1024);
    commandRun(terminals, "still-running", "tailing a log", null);
    const ids = Array.from({ length: EXITED_TERMINALS_KEPT + 3 }, (_, i) => `cmd-${i}`);
    for (const id of ids) commandRun(terminals, id, `output of ${id}`, 0);

    const dropped = ids.slice(0, 3);
    const kept = ids.slice(3);
    // Still known as the agent's own terminals, without their output.
    for (const id of dropped) expect(terminals.find(id)).toEqual({ output: "", truncated: true, exit: { exitCode: 0, signal: null } });
    for (const id of kept) expect(terminals.find(id)).toEqual({ output: `output of ${id}`, truncated: false, exit: { exitCode: 0, signal: null } });
    expect(terminals.find("still-running")).toEqual({ output: "tailing a log", truncated: false, exit: null });
  });

  it("counts exits in the order they happen, not the order the terminals started", () => {
    const terminals = new EmbeddedTerminals(1024);
    commandRun(terminals, "long", "started first", null);
    for (let i = 0; i < EXITED_TERMINALS_KEPT; i++) commandRun(terminals, `quick-${i}`, "x", 0);
    terminals.absorb({ terminal_exit: { terminal_id: "long", exit_code: 0, signal: null } });
    // "long" exited last: it stays, the first quick one goes.
    expect(terminals.find("long")).toMatchObject({ output: "started first" });
    expect(terminals.find("quick-0")).toMatchObject({ output: "", truncated: true });
    expect(terminals.find("quick-1")).toBeDefined();
  });

  it("a terminal whose output was dropped is not announced again as running by a late update naming it", () => {
    const terminals = new EmbeddedTerminals(1024);
    for (let i = 0; i <= EXITED_TERMINALS_KEPT; i++) commandRun(terminals, `cmd-${i}`, "x", 0);
    terminals.absorb({ terminal_info: { terminal_id: "cmd-0" } });
    expect(terminals.find("cmd-0")).toEqual({ output: "", truncated: true, exit: { exitCode: 0, signal: null } });
  });

  it(`forgets exited terminals past the ${EXITED_TERMINALS_NAMED} latest altogether`, () => {
    const terminals = new EmbeddedTerminals(16);
    const count = EXITED_TERMINALS_NAMED + 2;
    for (let i = 0; i < count; i++) commandRun(terminals, `cmd-${i}`, "x", 0);
    expect(terminals.find("cmd-0")).toBeUndefined();
    expect(terminals.find("cmd-1")).toBeUndefined();
    expect(terminals.find("cmd-2")).toMatchObject({ output: "", truncated: true });
    expect(terminals.find(`cmd-${count - 1}`)).toMatchObject({ output: "x" });
  });
});
