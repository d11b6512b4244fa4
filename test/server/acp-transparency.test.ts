import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { methods, RequestError, type ToolCallContent } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { StampedRecord } from "../../src/host/host-records.js";
import { cleanUp, startFixture, waitUntil, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

function recordsOf(fixture: BerthFixture, kind: string): StampedRecord[] {
  return fixture.berth.host.recentRecords(1000).filter(({ record }) => record.kind === kind);
}

async function childGone(fixture: BerthFixture, sessionId: string): Promise<void> {
  await waitUntil(() => fixture.berth.host.getSession(sessionId)?.pid === null, "the agent child to be released");
}

describe("ACP through Berth: what the agent offers reaches the client", () => {
  it("initialize answers with the agent's own answer plus Berth's additions, starting the agent once per command line", async () => {
    const fixture = await startFixture();
    const answer = (await fixture.connect()).initialized;
    expect(answer.agentInfo).toMatchObject({ name: "berth-demo-agent" });
    expect(answer.agentCapabilities).toMatchObject({ loadSession: true, sessionCapabilities: { list: {}, resume: {}, close: {} }, mcpCapabilities: { http: true } });
    expect(answer._meta).toMatchObject({ "berth/host": { name: "berth" } });
    expect(recordsOf(fixture, "agent_asked").map(({ record }) => record)).toEqual([expect.objectContaining({ agent: "demo", purpose: "initialize" })]);

    // Another client, and the same host after a restart: the stored answer, no process started.
    await fixture.connect();
    expect(recordsOf(fixture, "agent_asked")).toHaveLength(1);
    await fixture.stop();
    const again = await startFixture({ dataDir: fixture.dataDir, workDir: fixture.workDir });
    const before = recordsOf(again, "agent_asked").length;
    expect((await again.connect()).initialized.agentInfo).toMatchObject({ name: "berth-demo-agent" });
    expect(recordsOf(again, "agent_asked")).toHaveLength(before);
  });

  it("a request for no session goes to an agent process of its own, whose error comes back unchanged", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    const error = await client.agent.request("_nobody/knows", { x: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).code).toBe(-32601);
    await waitUntil(() => recordsOf(fixture, "agent_asked").some(({ record }) => record.kind === "agent_asked" && record.method === "_nobody/knows"), "the request's record");
  });

  it("a tool call's terminal becomes the command's output, sent again as it grows; a client may ask for raw terminal ids", async () => {
    const fixture = await startFixture();
    const shown = await fixture.connect({ capabilities: { elicitation: { form: {} } } });
    const raw = await fixture.connect({ capabilities: { _meta: { "berth/rawTerminals": true } } });
    const sessionId = await shown.newSession(fixture.workDir);
    await raw.load(sessionId, fixture.workDir);
    const turn = shown.prompt(sessionId, "/run for i in 1 2 3; do echo line$i; sleep 1; done");

    const contents = (client: typeof shown): ToolCallContent[][] =>
      client.notifications.flatMap(({ update }) =>
        (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") && update.content ? [update.content] : [],
      );
    const texts = () => contents(shown).flatMap((items) => items.flatMap((item) => (item.type === "content" && item.content.type === "text" ? [item.content.text] : [])));
    // While the command still runs, its output so far reaches the client that could not show a terminal.
    await waitUntil(() => texts().some((text) => text.includes("line1") && !text.includes("line3")), "partial output in the tool call");
    expect((await turn).stopReason).toBe("end_turn");
    await waitUntil(() => texts().some((text) => text.includes("line3")), "the whole output");
    expect(contents(shown).flat().some((item) => item.type === "terminal")).toBe(false);
    // The raw client got the terminal id, as the agent sent it.
    await waitUntil(() => contents(raw).flat().some((item) => item.type === "terminal"), "the raw terminal content");
  });

  it("a form question a client cannot show is left for the dashboard, and the client is told where to answer", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect({ capabilities: {} });
    const sessionId = await client.newSession(fixture.workDir);
    // The agent sees Berth's capabilities (forms included), so it asks; Berth keeps the question.
    const turn = client.prompt(sessionId, "/elicit Your name?");
    await waitUntil(() => fixture.berth.host.pendingQuestions(sessionId).length === 1, "the pending question");
    const [question] = fixture.berth.host.pendingQuestions(sessionId);
    await waitUntil(() => client.texts(sessionId).includes(`berth answer ${question!.id}`), "the notice naming the question");
    expect(client.elicitations).toHaveLength(0);
    fixture.berth.host.answerQuestion(question!.id, { action: "accept", content: { answer: "Ada" } });
    expect((await turn).stopReason).toBe("end_turn");
  });

  it("a session without turns that the agent cannot reopen is created again; one with turns fails naming the agent's reason", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms" } });
    const client = await fixture.connect();
    const fresh = await client.newSession(fixture.workDir);
    const talked = await client.newSession(fixture.workDir);
    await client.prompt(talked, "remember me");
    for (const sessionId of [fresh, talked]) await client.agent.request(methods.agent.session.close, { sessionId });
    await childGone(fixture, fresh);
    await childGone(fixture, talked);
    // The agent forgets every conversation.
    const stateDir = join(fixture.dataDir, "agent-state", "demo");
    for (const file of readdirSync(stateDir)) rmSync(join(stateDir, file), { recursive: true, force: true });

    await client.load(fresh, fixture.workDir);
    expect((await client.prompt(fresh, "hello again")).stopReason).toBe("end_turn");
    const error = await client.load(talked, fixture.workDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).message).toMatch(/the agent could not reopen this session/);
  });
});
