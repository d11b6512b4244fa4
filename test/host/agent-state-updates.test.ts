import { fileURLToPath } from "node:url";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import { announcementOf, announces, changesState, withUpdate, type StateUpdate } from "../../src/host/agent-session-state.js";
import { SessionStore } from "../../src/store/sessions.js";
import { closeAllHosts, collect, startHost, text } from "./host-harness.js";

afterEach(async () => {
  vi.restoreAllMocks();
  await closeAllHosts();
});

const stateAgent = fileURLToPath(new URL("./fixtures/state-updates-agent.mjs", import.meta.url));

async function startStateAgentHost() {
  const fixture = await startHost({ config: { agents: { state: { command: process.execPath, args: [stateAgent] } } } });
  const session = await fixture.host.createSession({ cwd: fixture.workDir, agent: "state" });
  return { host: fixture.host, session };
}

describe("the session's state as the agent's updates announce it", () => {
  it("a set_mode is announced by the agent only by an update naming that mode; another mode meanwhile is not its", () => {
    const announcement = announcementOf("session/set_mode", { sessionId: "s", modeId: "code" }, {})!;
    expect(announces({ sessionUpdate: "current_mode_update", currentModeId: "code" }, announcement)).toBe(true);
    expect(announces({ sessionUpdate: "current_mode_update", currentModeId: "code", _meta: { by: "agent" } }, announcement)).toBe(true);
    expect(announces({ sessionUpdate: "current_mode_update", currentModeId: "plan" }, announcement)).toBe(false);
    expect(announces({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "code" } }, announcement)).toBe(false);
    const options = [{ id: "verbosity", currentValue: "terse" }];
    const optionAnnouncement = announcementOf("session/set_config_option", {}, { configOptions: options })!;
    expect(announces({ sessionUpdate: "config_option_update", configOptions: options }, optionAnnouncement)).toBe(true);
    expect(announces({ sessionUpdate: "config_option_update", configOptions: [] }, optionAnnouncement)).toBe(false);
  });

  it("mode, config option and command updates change the stored state; other kinds do not", () => {
    const state = { modes: { currentModeId: "ask" } };
    const mode: StateUpdate = { sessionUpdate: "current_mode_update", currentModeId: "code" };
    const options: StateUpdate = { sessionUpdate: "config_option_update", configOptions: [] };
    const commands: StateUpdate = { sessionUpdate: "available_commands_update", availableCommands: [] };
    for (const update of [mode, options, commands]) expect(changesState(update)).toBe(true);
    expect(withUpdate(state, mode)).toEqual({ modes: { currentModeId: "code" } });
    expect(withUpdate(state, options)).toEqual({ ...state, configOptions: [] });
    expect(withUpdate(state, commands)).toEqual({ ...state, availableCommands: [] });
    const others: SessionUpdate[] = [
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } },
      { sessionUpdate: "tool_call", toolCallId: "t", title: "t" },
      { sessionUpdate: "usage_update", used: 1, size: 2 },
      { sessionUpdate: "session_info_update", title: "a title" },
    ];
    for (const update of others) expect(changesState(update)).toBe(false);
  });

  it("updates that change the state are stored with the session, from a real agent", async () => {
    const { host, session } = await startStateAgentHost();
    const ticket = host.hold(session.id, "test");
    await ticket.child;
    expect(host.agentState(session.id).modes).toMatchObject({ currentModeId: "ask" });
    expect((await host.prompt(session.id, text("state"))).stopReason).toBe("end_turn");
    await vi.waitFor(() => expect(host.agentState(session.id).availableCommands).toEqual([{ name: "review", description: "Review the change" }]));
    expect(host.agentState(session.id)).toMatchObject({
      modes: { currentModeId: "code" },
      configOptions: [{ id: "effort", currentValue: "high" }],
    });
    ticket.release();
  });

  it("a streamed reply's plain chunks read nothing of the stored session", async () => {
    const { host, session } = await startStateAgentHost();
    const ticket = host.hold(session.id, "test");
    await ticket.child;
    const live = collect(host, session.id);
    // Every read of a session on the host's own store, counted on the way to the real read.
    const reads = vi.spyOn(SessionStore.prototype, "get");
    const readsDuring = async (chunks: number) => {
      reads.mockClear();
      live.events.length = 0;
      expect((await host.prompt(session.id, text(`chunks ${chunks}`))).stopReason).toBe("end_turn");
      await vi.waitFor(() => expect(live.texts()).toHaveLength(chunks));
      return reads.mock.calls.filter(([id]) => id === session.id).length;
    };
    // The turn itself reads the session (its start and end); its chunks add no read.
    expect(await readsDuring(2_000)).toBe(await readsDuring(1));
    ticket.release();
  });
});
