import type { AgentContext, SessionNotification } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { floodChunk } from "../../src/agents/demo-agent/commands/flood.js";
import { silentLogger } from "../../src/host/logger.js";
import { SessionFeed, type ClientQueue } from "../../src/server/session-feed.js";
import { closeAllHosts, startHost, text, waitUntil } from "../host/host-harness.js";

afterEach(closeAllHosts);

/** A client's queue whose room the test gives and takes, as a socket's reader would by reading or not. */
class GivenRoom implements ClientQueue {
  room = true;
  behindNow = 0;
  private waiting: Array<() => void> = [];

  hasRoom(): boolean {
    return this.room;
  }

  roomAgain(): Promise<void> {
    return this.room ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }

  behind(): () => void {
    this.behindNow++;
    return () => this.behindNow--;
  }

  give(): void {
    this.room = true;
    for (const wake of this.waiting.splice(0)) wake();
  }
}

/** The agent's reply text in what the feed sent. */
function agentText(sent: SessionNotification[]): string {
  return sent
    .map(({ update }) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : ""))
    .join("");
}

/**
 * What the feed sent, as the client reads it: the kind and text of each update. The agent's announcement of its
 * commands is left out: it comes as the session opens, before or after either feed began.
 */
function shown(sent: SessionNotification[]): string[] {
  return sent
    .filter(({ update }) => update.sessionUpdate !== "available_commands_update")
    .map(({ update }) => {
      const content = (update as { content?: { type?: string; text?: string } }).content;
      return `${update.sessionUpdate}:${content?.type === "text" ? content.text : ""}`;
    });
}

describe("a session feed whose client falls behind (real host, the demo agent)", () => {
  it("sends what it was not sent from the journal once the client has room: the live order, other clients' prompts in their places", async () => {
    const { host, workDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    const ticket = host.hold(session.id, "test");
    await ticket.child;

    // The same client, live all along: what the one that falls behind must end up with.
    const liveSent: SessionNotification[] = [];
    const live = new SessionFeed({
      host,
      sessionId: session.id,
      holderId: "acp:live",
      client: {} as AgentContext,
      capabilities: {},
      log: silentLogger(),
      notify: (_method, params) => void liveSent.push(params as SessionNotification),
    });
    await live.start({ replay: false });

    const queue = new GivenRoom();
    const behindSent: SessionNotification[] = [];
    const behind = new SessionFeed({
      host,
      sessionId: session.id,
      holderId: "acp:behind",
      client: {} as AgentContext,
      capabilities: {},
      log: silentLogger(),
      notify: (_method, params) => void behindSent.push(params as SessionNotification),
      queue,
    });
    await behind.start({ replay: false });

    // The client stops reading before the first turn: every update after that waits in the journal, not in memory.
    queue.room = false;
    expect((await host.prompt(session.id, text("/flood 300 8"))).stopReason).toBe("end_turn");
    expect((await host.prompt(session.id, text("and then"))).stopReason).toBe("end_turn");
    await waitUntil(() => agentText(liveSent).endsWith("and then"), "the live client has the second turn");
    expect(queue.behindNow).toBe(1);
    // Sent before it fell behind: what was not an update, up to the first update that found no room.
    expect(shown(behindSent).filter((each) => each.startsWith("agent_message_chunk:"))).toEqual([]);
    expect(shown(liveSent).slice(0, shown(behindSent).length)).toEqual(shown(behindSent));

    queue.give();
    await waitUntil(() => queue.behindNow === 0, "the feed is live again");
    expect(shown(behindSent)).toEqual(shown(liveSent));
    const flood = Array.from({ length: 300 }, (_, index) => floodChunk(index, 8)).join("");
    expect(agentText(liveSent)).toBe(`${flood}and then`);
    expect(shown(liveSent).filter((each) => each.startsWith("user_message_chunk:"))).toEqual([
      "user_message_chunk:/flood 300 8",
      "user_message_chunk:and then",
    ]);

    // Live again: the next turn goes straight to it.
    behindSent.length = 0;
    liveSent.length = 0;
    expect((await host.prompt(session.id, text("live once more"))).stopReason).toBe("end_turn");
    await waitUntil(() => agentText(behindSent).endsWith("live once more"), "the caught-up client has the third turn live");
    expect(shown(behindSent)).toEqual(shown(liveSent));
    live.close();
    behind.close();
    ticket.release();
  });

  it("a session/load replay that meets another client's prompt made while it ran shows that prompt once", async () => {
    const { host, workDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    const ticket = host.hold(session.id, "test");
    await ticket.child;
    // More than a page of the replay (1,000 events): it reads its second page after the prompt below.
    expect((await host.prompt(session.id, text("/flood 1200 8"))).stopReason).toBe("end_turn");

    // The client reads nothing yet: the replay waits at its first entry.
    const queue = new GivenRoom();
    queue.room = false;
    const sent: SessionNotification[] = [];
    const feed = new SessionFeed({
      host,
      sessionId: session.id,
      holderId: "acp:feed",
      client: {} as AgentContext,
      capabilities: {},
      log: silentLogger(),
      notify: (_method, params) => void sent.push(params as SessionNotification),
      queue,
    });
    const started = feed.start({ replay: true });
    // Published while the replay waits, and in the journal the replay reads on to.
    expect((await host.prompt(session.id, text("second"))).stopReason).toBe("end_turn");
    queue.give();
    await started;
    await waitUntil(() => agentText(sent).endsWith("second"), "the replay reached the second turn");
    expect(shown(sent).filter((each) => each.startsWith("user_message_chunk:"))).toEqual([
      "user_message_chunk:/flood 1200 8",
      "user_message_chunk:second",
    ]);
    expect(agentText(sent)).toBe(`${Array.from({ length: 1200 }, (_, index) => floodChunk(index, 8)).join("")}second`);
    feed.close();
    ticket.release();
  });
});
