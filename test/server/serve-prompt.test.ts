// The end-to-end flow of `npm run test:quick`: a real `berth serve` (dist/), the demo agent as its child, a client that
// prompts over ACP and gets the answer, the journal that keeps it, and a stop that leaves nothing running.
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/store/events.js";
import type { SessionView } from "../../src/host/views.js";
import { killLeftovers, startedProcess, type StartedProcess } from "../support/process-table.js";
import { AcpTestClient, cleanUp, tempDir, waitUntilGone } from "./server-harness.js";
import { BerthProcess } from "./serve-process.js";

const processes: BerthProcess[] = [];
const agents: StartedProcess[] = [];

afterEach(async () => {
  for (const berth of processes.splice(0)) berth.killGroup();
  killLeftovers(agents.splice(0));
  await cleanUp();
});

describe("berth serve, end to end", () => {
  it("a client prompts the demo agent through a real berth serve and gets its answer, which the journal keeps; SIGTERM leaves nothing running", async () => {
    const berth = new BerthProcess(["serve", "--port", "0", "--data-dir", tempDir("berth-e2e-data-")], {
      XDG_CONFIG_HOME: tempDir("berth-e2e-config-"),
    });
    processes.push(berth);
    const { url, token, acpUrl } = await berth.startupLine();
    const client = await AcpTestClient.connect(acpUrl, { token });
    const sessionId = await client.newSession(tempDir("berth-e2e-work-"));

    const question = "What does the quick loop check?";
    expect(await client.prompt(sessionId, question)).toMatchObject({ stopReason: "end_turn" });
    // The demo agent answers a plain prompt with its text.
    expect(client.texts(sessionId)).toBe(question);

    const api = (path: string) => fetch(url + path, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.json());
    const { events } = (await api(`/api/sessions/${sessionId}/events`)) as { events: JournalEvent[] };
    const answer = events
      .map((event) => event.payload as { update?: { sessionUpdate?: string; content?: { text?: string } } })
      .filter((payload) => payload.update?.sessionUpdate === "agent_message_chunk")
      .map((payload) => payload.update!.content!.text)
      .join("");
    expect(answer).toBe(question);
    const { sessions } = (await api("/api/sessions")) as { sessions: SessionView[] };
    const agent = sessions.find((session) => session.id === sessionId)!.pid!;
    agents.push(startedProcess(agent));

    berth.signal("SIGTERM");
    expect(await berth.exited).toEqual({ code: 0, signal: null });
    expect(await waitUntilGone([agent])).toEqual([]);
  });
});
