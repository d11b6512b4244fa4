// A session's `lastTurn`: how its last turn ended, from its journal, so a list can say what its agent is doing.
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { cleanUp, startFixture, waitUntil } from "./server-harness.js";

afterEach(cleanUp);

describe("a session's last turn", () => {
  it("is null before any turn and while one runs, then completed, cancelled, failed (with the error) or exited (the agent crashed)", async () => {
    const fixture = await startFixture();
    const host = fixture.berth.host;
    const session = await host.createSession({ cwd: fixture.workDir });
    expect(host.getSession(session.id)?.lastTurn).toBeNull();

    await host.prompt(session.id, [{ type: "text", text: "hello" }]);
    expect(host.getSession(session.id)?.lastTurn).toMatchObject({ outcome: "completed", reason: null });

    const sleeping = host.prompt(session.id, [{ type: "text", text: "/sleep 10m" }]);
    await waitUntil(() => host.getSession(session.id)?.turnActive === true, "the turn runs");
    expect(host.getSession(session.id)?.lastTurn).toBeNull();
    await host.cancel(session.id);
    await sleeping;
    await waitUntil(() => host.getSession(session.id)?.lastTurn?.outcome === "cancelled", "the cancelled turn");

    await host.prompt(session.id, [{ type: "text", text: "/fail -32000 the disk is full" }]).catch(() => undefined);
    await waitUntil(() => host.getSession(session.id)?.lastTurn?.outcome === "failed", "the failed turn");
    expect(host.getSession(session.id)?.lastTurn?.reason).toContain("the disk is full");

    await host.prompt(session.id, [{ type: "text", text: "/crash" }]).catch(() => undefined);
    await waitUntil(() => {
      const outcome = host.getSession(session.id)?.lastTurn?.outcome;
      return outcome === "failed" || outcome === "exited";
    }, "the crashed turn");

    // Through REST too.
    const listed = (await (await fixture.api("/api/sessions")).json()) as { sessions: SessionView[] };
    expect(listed.sessions.find((s) => s.id === session.id)?.lastTurn).toEqual(host.getSession(session.id)?.lastTurn);
  });
});
