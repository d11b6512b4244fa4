// An agent that exits on its own is one log line, its `child_exited` record's, carrying what a maintainer needs.
import { afterEach, describe, expect, it } from "vitest";
import { capturedLog, cleanUp, startFixture, waitUntil } from "./server-harness.js";

afterEach(cleanUp);

describe("an agent that exits on its own", () => {
  it("is logged once: a warning with the stored record's fields (session, agent, pid, exit) and the agent's stderr, which the record does not keep", async () => {
    const { log, lines } = capturedLog();
    const fixture = await startFixture({ log });
    const host = fixture.berth.host;
    const session = await host.createSession({ cwd: fixture.workDir });
    const { pid } = await host.hold(session.id, "client").child;
    await expect(host.prompt(session.id, [{ type: "text", text: "/crash" }])).rejects.toThrow(/the turn failed/);
    await waitUntil(() => host.getSession(session.id)!.state === "childless", "the exit is noticed");
    await host.committed();
    const stored = host.recentRecords(1000).filter((r) => r.record.kind === "child_exited");
    const record = { kind: "child_exited", sessionId: session.id, agent: "demo", pid, exit: "exit code 3" };
    // Exactly these fields: the agent's stderr is not stored or streamed with the record.
    expect(stored).toEqual([expect.objectContaining({ message: "agent child exited unexpectedly", record })]);

    // Once the host has stopped, no line can follow: the exit's lines are all there. The demo agent says on stderr that
    // it serves, at its start: the line carries that tail.
    await fixture.stop();
    expect(lines.filter((line) => line.msg === "agent child exited unexpectedly")).toEqual([
      expect.objectContaining({ level: 40, ...record, stderr: expect.stringContaining("serving ACP on stdio") }),
    ]);
  });
});
