import { isAbsolute } from "node:path";
import { z } from "zod";
import type { Host } from "../host/host.js";
import type { LocationView, QuestionAnswer, SessionKey } from "../host/views.js";
import { berthVersion } from "../version.js";
import { mergedEvents } from "./chunk-merging.js";
import { worktreeAsked, worktreeField } from "./worktree-field.js";
import { streamInstall } from "./install-stream.js";
import { HttpError, readJsonBody, sentBody } from "./http-io.js";
import type { BerthMetrics } from "./metrics.js";
import type { PeerRest } from "./peer-rest.js";
import { empty, json, type Route } from "./router.js";
import { requireSession, sessionRoute } from "./session-route.js";
import { decodeCursor, encodeCursor, MAX_SESSION_PAGE, SESSION_PAGE, type ListCursor } from "./list-cursors.js";
import { OWN_SESSIONS_PATH, type OwnSessionEvents } from "./own-session-events.js";
import type { OperatorEvents } from "./sse.js";
import type { Tickets } from "./tickets.js";

export interface RestDeps {
  readonly host: Host;
  readonly events: OperatorEvents;
  /** The stream of this host's own sessions that its peers follow. */
  readonly ownSessions: OwnSessionEvents;
  readonly metrics: BerthMetrics;
  readonly tickets: Tickets;
  /** Relays requests for another host's sessions to their owner (none set: they are answered here, read-only). */
  readonly peers: PeerRest;
}

const MAX_EVENTS = 10_000;
const MAX_RECORDS = 1_000;

const newSessionBody = z.strictObject({
  cwd: z.string({ error: "expected an absolute directory path" }),
  agent: z.string({ error: "expected an agent id" }).min(1, "expected an agent id").optional(),
  workspace: z.string({ error: "expected a workspace id or null" }).min(1, "expected a non-empty workspace id").nullable().optional(),
  title: z.string({ error: "expected a title" }).optional(),
  worktree: worktreeField.optional(),
  /** Checked by the host, which names what is wrong (docs/sandbox.md). */
  sandbox: z.unknown().optional(),
});

const landBody = z.strictObject({
  message: z.string({ error: "expected a commit message" }).min(1, "expected a non-empty commit message").optional(),
});

const installBody = z.strictObject({
  id: z.string({ error: "expected an agent id" }).min(1, "expected an agent id"),
  version: z.string({ error: "expected a version" }).min(1, "expected a version").optional(),
  mode: z.enum(["add", "upgrade"], { error: 'expected "add" or "upgrade"' }).optional(),
  distribution: z.enum(["npx", "binary", "uvx"], { error: 'expected "npx", "binary" or "uvx"' }).optional(),
});

const renameBody = z.strictObject({
  title: z.union([z.string(), z.null()], { error: "expected a title (a string) or null to clear it" }),
});

const answerBody = z.union(
  [
    z.strictObject({ optionId: z.string().min(1) }),
    z.strictObject({ action: z.literal("accept"), content: z.record(z.string(), z.unknown()) }),
    z.strictObject({ action: z.enum(["decline", "cancel"]) }),
  ],
  { error: 'expected { "optionId": "..." }, { "action": "accept", "content": {...} }, { "action": "decline" } or { "action": "cancel" }' },
);

/** A peer's `GET /api/locations` answer, as far as the fleet-wide read uses it. */
function isLocationList(body: unknown): body is { locations: LocationView[] } {
  return (
    typeof body === "object" &&
    body !== null &&
    Array.isArray((body as { locations?: unknown }).locations) &&
    (body as { locations: unknown[] }).locations.every((location) => typeof location === "object" && location !== null)
  );
}

/** The REST API of the contract in docs/api.md; each route is listed in docs/openapi.json. */
export function restRoutes({ host, events, ownSessions, metrics, tickets, peers }: RestDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/healthz",
      public: true,
      // Answered from memory: whatever the store is doing, this never waits on it.
      handle: () => {
        const store = host.storeHealth();
        // In a fleet, heartbeats that do not get through degrade the host too: past the deadline it gives its sessions up.
        const heartbeats = host.heartbeatHealth();
        const status = store.state === "ok" && heartbeats?.state !== "degraded" ? "ok" : "degraded";
        return json({ status, version: berthVersion, store, ...(heartbeats ? { heartbeats } : {}) });
      },
    },
    // Whether sessions may have a sandbox here (docs/sandbox.md): probed once, then from memory.
    { method: "GET", path: "/api/sandbox", handle: () => json(host.sandboxAvailability()) },
    // One connection of EventSource or a browser's WebSocket, which cannot send the token in a header.
    { method: "POST", path: "/api/tickets", handle: () => json(tickets.issue(), 201) },
    {
      method: "GET",
      path: "/api/directory",
      peers: "read",
      // Whether the directory exists on this host (never asked of its peers): where a fleet places a new session (docs/fleet.md).
      handle: async ({ url }) => {
        const path = url.searchParams.get("path");
        if (path === null || !isAbsolute(path))
          throw new HttpError(400, "invalid_query", `path must be an absolute path, got ${path === null ? "none" : JSON.stringify(path)}`);
        return json({ path, found: await host.lookAtDirectory(path), agents: host.agents() });
      },
    },
    {
      method: "GET",
      path: "/api/agents",
      handle: () => json({ agents: host.agents(), default: host.config.defaultAgent, details: host.agentSources() }),
    },
    { method: "GET", path: "/api/agents/catalogue", handle: async () => json(await host.agentCatalogue()) },
    {
      method: "POST",
      path: "/api/agents/installs",
      handle: async ({ req }) => json(await host.startAgentInstall(parse(installBody, await readJsonBody(req))), 202),
    },
    {
      method: "GET",
      path: "/api/agents/installs/:id/events",
      handle: ({ res, params }) => {
        streamInstall(host, params.id!, res);
        return undefined;
      },
    },
    {
      method: "DELETE",
      path: "/api/agents/:id",
      handle: ({ params }) => {
        host.removeInstalledAgent(params.id!);
        return empty(204);
      },
    },
    {
      method: "GET",
      path: "/api/locations",
      peers: "read",
      // In a fleet with a cluster secret, every online host's locations, each read from its host (docs/fleet.md, "One view").
      handle: async ({ req }) => {
        const { answers, unreachable } = await peers.readPeers(req, "/api/locations", isLocationList);
        const fromPeers = answers.flatMap(({ host: peer, body }) => body.locations.filter((location) => location.host === peer));
        return json({ locations: [...host.locations(), ...fromPeers], unreachable });
      },
    },
    {
      method: "GET",
      path: "/api/hosts",
      handle: () => {
        const hosts = host.hosts();
        // One host on SQLite: no fleet to list (docs/api.md).
        if (!hosts)
          throw new HttpError(
            404,
            "not_in_a_fleet",
            'this host is not in a fleet: its store is SQLite (set "store" to a postgres:// URL to run a fleet)',
          );
        return json({ hosts });
      },
    },
    {
      method: "GET",
      path: "/api/sessions",
      handle: ({ url }) => {
        const cwd = url.searchParams.get("cwd");
        const limit = limitParam(url, SESSION_PAGE, MAX_SESSION_PAGE);
        const after = afterParam(url);
        const page = host.sessionPage({ ...(cwd === null ? {} : { cwd }), ...(after ? { after } : {}), limit });
        return json({ sessions: page.sessions, ...(page.next ? { nextCursor: encodeCursor({ after: page.next }) } : {}) });
      },
    },
    {
      method: "POST",
      path: "/api/sessions",
      handle: async ({ req }) => {
        const { worktree, ...body } = parse(newSessionBody, await readJsonBody(req));
        return json(await host.createSession({ ...body, ...worktreeAsked(worktree) }), 201);
      },
    },
    sessionRoute(host, peers, {
      method: "POST",
      path: "/api/sessions/:id/land",
      // No body, no message: the session's title is.
      body: async (req) => {
        const { message } = parse(landBody, sentBody(req) ? await readJsonBody(req) : {});
        return message === undefined ? {} : { message };
      },
      answer: async ({ id, body }) => json(await host.landSession(id, body.message)),
    }),
    sessionRoute(host, peers, {
      method: "POST",
      path: "/api/sessions/:id/discard",
      answer: async ({ id }) => json(await host.discardSession(id)),
    }),
    sessionRoute(host, peers, {
      method: "GET",
      path: "/api/sessions/:id/worktree",
      answer: async ({ id }) => json(await host.worktreeStatus(id)),
    }),
    { method: "GET", path: "/api/sessions/:id", handle: ({ params }) => json(requireSession(host, params.id!)) },
    sessionRoute(host, peers, {
      method: "GET",
      path: "/api/sessions/:id/agent-state",
      // Read-only and from the store: a page reading a session shows its agent's choices without starting it (L9).
      answer: ({ id }) => json(host.agentState(id)),
    }),
    sessionRoute(host, peers, {
      method: "GET",
      path: "/api/sessions/:id/terminals/:terminalId",
      // Read-only: a running command's output for a page that reads the session without holding it (L9).
      answer: ({ id, params }) => {
        const terminalId = params.terminalId!;
        const output = host.terminalOutput(id, terminalId);
        if (!output)
          throw new HttpError(
            404,
            "terminal_not_found",
            `no terminal "${terminalId}" for session "${id}" (a command's output is kept until its agent releases the terminal or the location closes)`,
          );
        return json(output);
      },
    }),
    {
      method: "GET",
      path: "/api/sessions/:id/events",
      peers: "relay",
      handle: ({ req, url, params }) => {
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        const after = countParam(url, "after", 0);
        const limit = limitParam(url, 1_000, MAX_EVENTS);
        const merge = url.searchParams.get("merge");
        if (merge !== null && merge !== "chunks") throw new HttpError(400, "invalid_query", `merge must be "chunks", got "${merge}"`);
        // One event past the page tells whether there is more (a merged page is shorter than its limit).
        const read = host.events(params.id!, { after, limit: limit + 1 });
        const more = read.length > limit;
        const page = more ? read.slice(0, limit) : read;
        return json({ events: merge === null ? page : mergedEvents(page), more });
      },
    },
    sessionRoute(host, peers, {
      method: "PATCH",
      path: "/api/sessions/:id",
      body: async (req) => parse(renameBody, await readJsonBody(req)),
      answer: ({ id, body }) => json(host.renameSession(id, body.title)),
    }),
    {
      method: "DELETE",
      path: "/api/sessions/:id",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        await host.deleteSession(params.id!);
        return empty(204);
      },
    },
    {
      method: "GET",
      path: "/api/questions",
      handle: ({ url }) => json({ questions: host.pendingQuestions(url.searchParams.get("sessionId") ?? undefined) }),
    },
    {
      method: "POST",
      path: "/api/questions/:id/answer",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        const body = await readJsonBody(req);
        const shown = host.question(params.id!);
        const question = shown ?? (await host.storedQuestion(params.id!));
        if (!question) throw new HttpError(404, "question_not_found", `no question "${params.id}"`);
        const answer = parse(answerBody, body) as QuestionAnswer;
        // Resolved on another host of the fleet (this host's view of it dropped it): the first answer won there.
        if (!shown && question.state !== "pending")
          throw new HttpError(409, "question_already_resolved", `question "${params.id}" was already ${question.state}`);
        // Its agent waits on the owner: the answer goes there, and the store takes the first answer fleet-wide.
        const owner = peers.ownerFor(question.sessionId, req);
        if (owner) return peers.relay(owner, req, url, answer);
        return json(await host.answerQuestion(params.id!, answer));
      },
    },
    {
      method: "GET",
      path: "/api/records",
      handle: ({ url }) => {
        const limit = limitParam(url, 100, MAX_RECORDS);
        return json({ records: host.recentRecords(limit) });
      },
    },
    {
      method: "GET",
      path: "/api/events",
      handle: ({ res }) => {
        events.attach(res);
        return undefined;
      },
    },
    {
      method: "GET",
      path: OWN_SESSIONS_PATH,
      peers: "live-feed",
      // What every peer follows to show this host's sessions live (docs/fleet.md, "One view"): this host's own only.
      handle: ({ res }) => {
        ownSessions.attach(res);
        return undefined;
      },
    },
    {
      method: "GET",
      path: "/metrics",
      handle: async () => ({ kind: "text", status: 200, ...(await metrics.render()) }),
    },
  ];
}

/** `cursor`: where the page starts, a `nextCursor` of the previous page; none for the first. */
function afterParam(url: URL): SessionKey | undefined {
  const text = url.searchParams.get("cursor");
  if (text === null) return undefined;
  let cursor: ListCursor;
  try {
    cursor = decodeCursor(text);
  } catch (error) {
    throw new HttpError(400, "invalid_cursor", (error as Error).message);
  }
  // An ACP `session/list` cursor that went on to the agent's own sessions: REST lists Berth's only.
  if (!("after" in cursor))
    throw new HttpError(
      400,
      "invalid_cursor",
      `cursor ${JSON.stringify(text)} is a session/list cursor of the agent's own sessions, not one of this list`,
    );
  return cursor.after;
}

/** `limit`: a page of at least one (an empty page could never be read on from) and at most `max`. */
function limitParam(url: URL, fallback: number, max: number): number {
  const limit = countParam(url, "limit", fallback);
  if (limit < 1 || limit > max) throw new HttpError(400, "invalid_query", `limit must be from 1 to ${max}, got ${limit}`);
  return limit;
}

function countParam(url: URL, name: string, fallback: number): number {
  const value = url.searchParams.get(name);
  if (value === null) return fallback;
  const count = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  // Digits beyond 2^53 are no exact number (and no sequence number the journal will ever reach).
  if (!Number.isSafeInteger(count))
    throw new HttpError(400, "invalid_query", `${name} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got "${value}"`);
  return count;
}

/** A request body checked against its schema; every problem named in one 400. */
export function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    const what =
      issue.code === "unrecognized_keys"
        ? `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((key) => `"${key}"`).join(", ")}`
        : issue.message;
    return `${where}${what}`;
  });
  throw new HttpError(400, "invalid_body", `invalid request body: ${problems.join("; ")}`);
}
