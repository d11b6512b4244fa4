import { methods, type ListSessionsResponse } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import type { SessionView } from "../../src/host/views.js";
import { DemoAgentProcess } from "../agents/demo-agent-process.js";
import { cleanUp, startFixture, tempDir, type AcpTestClient, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

interface SessionsPage {
  readonly sessions: SessionView[];
  readonly nextCursor?: string;
}

async function getJson<T>(fixture: BerthFixture, path: string): Promise<{ status: number; body: T }> {
  const res = await fixture.api(path);
  return { status: res.status, body: (await res.json()) as T };
}

/** Berth sessions made over REST (no agent process started), in the fixture's work dir unless `body` says. */
async function createSessions(fixture: BerthFixture, count: number, body: { cwd?: string; agent?: string } = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fixture.api("/api/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cwd: fixture.workDir, ...body }),
    });
    expect(res.status).toBe(201);
    ids.push(((await res.json()) as SessionView).id);
  }
  return ids;
}

/** Every page of `GET /api/sessions` from the first, following `nextCursor`. */
async function restPages(fixture: BerthFixture, query: string): Promise<SessionsPage[]> {
  const pages: SessionsPage[] = [];
  let cursor: string | undefined;
  do {
    const path = `/api/sessions?${query}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { status, body } = await getJson<SessionsPage>(fixture, path);
    expect(status).toBe(200);
    pages.push(body);
    cursor = body.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

/** Every page of ACP `session/list` from the first, following `nextCursor`. */
async function acpPages(client: AcpTestClient, params: { cwd?: string }): Promise<ListSessionsResponse[]> {
  const pages: ListSessionsResponse[] = [];
  let cursor: string | undefined;
  do {
    const page = (await client.agent.request(methods.agent.session.list, { ...params, ...(cursor ? { cursor } : {}) })) as ListSessionsResponse;
    pages.push(page);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

const idsOf = (pages: readonly { sessions: readonly SessionView[] }[]) => pages.flatMap((page) => page.sessions.map((session) => session.id));

/**
 * Cursors no host gives out, as a client could forge them: numbers no store compares exactly (beyond 2^53 - 1, beyond
 * PostgreSQL's bigint, negative, -0, NaN, infinite, fractions), ids no session has, and malformed tokens.
 */
const FORGED_CURSORS = (
  [
    ["beyond MAX_SAFE_INTEGER", '{"after":[9007199254740992,1,"a"]}'],
    ["beyond bigint", '{"after":[1,99999999999999999999999,"a"]}'],
    ["negative", '{"after":[-1,1,"a"]}'],
    ["minus zero", '{"after":[-0,1,"a"]}'],
    ["NaN", '{"after":[NaN,1,"a"]}'],
    ["infinite", '{"after":[1e400,1,"a"]}'],
    ["a fraction", '{"after":[1,1.5,"a"]}'],
    ["a number as a string", '{"after":["1",1,"a"]}'],
    ["null", '{"after":[null,1,"a"]}'],
    ["an empty id", '{"after":[1,1,""]}'],
    ["a NUL in the id", '{"after":[1,1,"a\\u0000b"]}'],
    ["an overlong id", `{"after":[1,1,"${"a".repeat(1025)}"]}`],
    ["a number as the id", '{"after":[1,1,7]}'],
    ["a fourth field", '{"after":[1,1,"a",4]}'],
    ["another key", '{"after":[1,1,"a"],"limit":5}'],
    ["__proto__", '{"after":[1,1,"a"],"__proto__":{"x":1}}'],
    ["an object", '{"after":{"updatedAt":1,"createdAt":1,"id":"a"}}'],
    ["an array", '[[1,1,"a"]]'],
    ["JSON null", "null"],
    ["an empty agent cursor", '{"agentCursor":""}'],
    ["not JSON", '{"after":[1,1,"a"]'],
  ] as Array<[string, string]>
).map(([what, json]) => [what, Buffer.from(json).toString("base64url")] as const);

describe("paginated session lists (REST GET /api/sessions, ACP session/list)", () => {
  it("REST pages by limit and cursor: every session once, in the whole list's order, the last page without nextCursor", async () => {
    const fixture = await startFixture();
    const other = tempDir("berth-pages-other-");
    await createSessions(fixture, 3);
    await createSessions(fixture, 2, { cwd: other });

    const whole = await getJson<SessionsPage>(fixture, "/api/sessions?limit=1000");
    expect(whole.body.sessions).toHaveLength(5);
    expect(whole.body).not.toHaveProperty("nextCursor");

    const pages = await restPages(fixture, "limit=2");
    expect(pages.map((page) => page.sessions.length)).toEqual([2, 2, 1]);
    expect(idsOf(pages)).toEqual(idsOf([whole.body]));
    // A page is what the list shows: the same views.
    expect(pages[0]!.sessions).toEqual(whole.body.sessions.slice(0, 2));

    // With cwd, the pages are that directory's.
    const inOther = await restPages(fixture, `limit=1&cwd=${encodeURIComponent(other)}`);
    expect(inOther.map((page) => page.sessions.length)).toEqual([1, 1]);
    expect(idsOf(inOther)).toEqual(whole.body.sessions.filter((session) => session.cwd === other).map((session) => session.id));
  });

  it("REST answers 100 sessions a page by default, so a client that reads only `sessions` still gets a list", async () => {
    const fixture = await startFixture();
    const created = await createSessions(fixture, 101);
    const first = await getJson<SessionsPage>(fixture, "/api/sessions");
    expect(first.body.sessions).toHaveLength(100);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const pages = await restPages(fixture, "");
    expect(pages.map((page) => page.sessions.length)).toEqual([100, 1]);
    expect(idsOf(pages).sort()).toEqual([...created].sort());
  });

  it("REST refuses a bad limit or cursor with 400 naming it, and keeps serving", async () => {
    const fixture = await startFixture();
    await createSessions(fixture, 1);
    const refusals: Array<[string, string, RegExp]> = [
      ["limit=0", "invalid_query", /^limit must be from 1 to 1000, got 0$/],
      ["limit=1001", "invalid_query", /^limit must be from 1 to 1000, got 1001$/],
      ["limit=ten", "invalid_query", /^limit must be a whole number/],
      ["cursor=not-a-cursor", "invalid_cursor", /^cursor "not-a-cursor" is not a cursor this host gave out/],
      [`cursor=${Buffer.from('{"after":[1,2]}').toString("base64url")}`, "invalid_cursor", /is not a cursor this host gave out/],
      [
        `cursor=${Buffer.from('{"agentCursor":"3"}').toString("base64url")}`,
        "invalid_cursor",
        /is a session\/list cursor of the agent's own sessions/,
      ],
    ];
    for (const [query, error, message] of refusals) {
      const { status, body } = await getJson<{ error: string; message: string }>(fixture, `/api/sessions?${query}`);
      expect({ query, status, error: body.error }).toEqual({ query, status: 400, error });
      expect(body.message).toMatch(message);
    }
    expect((await getJson<SessionsPage>(fixture, "/api/sessions")).body.sessions).toHaveLength(1);
  });

  it("REST refuses a forged cursor (numbers no store compares exactly, a bad id, a malformed token) with 400 invalid_cursor", async () => {
    const fixture = await startFixture();
    await createSessions(fixture, 1);
    for (const [what, cursor] of FORGED_CURSORS) {
      const { status, body } = await getJson<{ error: string; message: string }>(fixture, `/api/sessions?cursor=${cursor}`);
      expect({ what, status, error: body.error }).toEqual({ what, status: 400, error: "invalid_cursor" });
      expect(body.message).toMatch(/is not a cursor this host gave out/);
    }
    expect((await getJson<SessionsPage>(fixture, "/api/sessions")).body.sessions).toHaveLength(1);
  });

  it("ACP session/list pages Berth's sessions, then the agent's own on the page where Berth's end, under one opaque cursor", async () => {
    const stateDir = tempDir("berth-pages-agent-");
    const fixture = await startFixture({
      config: { agents: { lister: { command: process.execPath, args: [demoAgentMain, "--state-dir", stateDir, "--list-sessions", "paged"] } } },
    });
    // Two conversations made directly with the agent, outside Berth: it lists them one a page.
    const natives: string[] = [];
    const { agent } = await DemoAgentProcess.start({ stateDir });
    try {
      for (const prompt of ["first outside", "second outside"]) {
        const sessionId = await agent.newSession(fixture.workDir);
        await agent.prompt(sessionId, prompt);
        natives.push(sessionId);
      }
    } finally {
      await agent.stop();
    }
    const berths = await createSessions(fixture, 101, { agent: "lister" });

    const client = await fixture.connect({ agent: "lister" });
    const pages = await acpPages(client, { cwd: fixture.workDir });
    const nativeOf = (page: ListSessionsResponse) => page.sessions.filter((session) => session._meta?.["berth/native"] === true);
    expect(pages.map((page) => [page.sessions.length, nativeOf(page).length])).toEqual([
      [100, 0],
      [2, 1],
      [1, 1],
    ]);
    expect(pages.at(-1)).not.toHaveProperty("nextCursor");
    const listed = pages.flatMap((page) => page.sessions.map((session) => session.sessionId));
    expect(listed.sort()).toEqual([...berths, ...natives].sort());

    // Unnarrowed (no agent bound, no cwd): Berth's only, paged the same way.
    const unbound = await fixture.connect();
    const own = await acpPages(unbound, {});
    expect(own.map((page) => page.sessions.length)).toEqual([100, 1]);
    expect(own.flatMap((page) => page.sessions.map((session) => session.sessionId)).sort()).toEqual([...berths].sort());
  });

  it("ACP session/list refuses a cursor it did not give with -32602 naming it, and keeps serving", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    const ownId = await client.newSession(fixture.workDir);
    await expect(client.agent.request(methods.agent.session.list, { cursor: "bogus" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('cursor "bogus" is not a cursor this host gave out'),
    });
    const { sessions } = (await client.agent.request(methods.agent.session.list, {})) as ListSessionsResponse;
    expect(sessions.map((session) => session.sessionId)).toEqual([ownId]);
  });

  it("ACP session/list refuses a forged cursor (numbers no store compares exactly, a bad id, a malformed token) with -32602", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    const ownId = await client.newSession(fixture.workDir);
    for (const [what, cursor] of FORGED_CURSORS) {
      const refusal = await client.agent.request(methods.agent.session.list, { cursor }).then(
        () => undefined,
        (error: { code: number; data?: { code?: string } }) => ({ code: error.code, data: error.data?.code }),
      );
      expect({ what, refusal }).toEqual({ what, refusal: { code: -32602, data: "invalid_cursor" } });
    }
    const { sessions } = (await client.agent.request(methods.agent.session.list, {})) as ListSessionsResponse;
    expect(sessions.map((session) => session.sessionId)).toEqual([ownId]);
  });
});
