import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Access } from "../../src/server/access.js";
import { authMethodsOf } from "../../src/protocol/auth-methods.js";
import { agentLoginRoutes } from "../../src/server/agent-login-routes.js";
import type { Host } from "../../src/host/host.js";
import { loginRoutes } from "../../src/server/login-routes.js";
import { restRoutes, type RestDeps } from "../../src/server/rest-routes.js";
import { reviewRoutes } from "../../src/server/review-routes.js";
import type { PeerRest } from "../../src/server/peer-rest.js";
import type { ChangeStreams } from "../../src/server/change-streams.js";
import type { LoginRunner } from "../../src/host/views.js";
import { terminalLoginRoutes } from "../../src/server/terminal-login-routes.js";

const openapi = JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8")) as {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown; security?: Array<Record<string, unknown>> }>>;
  security: Array<Record<string, unknown>>;
  components: {
    securitySchemes: Record<string, { in?: string; name?: string }>;
    schemas: Record<string, { properties: Record<string, { type: string; items?: { type: string } }> }>;
  };
};
/** Served outside the router: ACP (both transport profiles) and the dashboard's files. */
const outsideRouter = ["GET /acp", "POST /acp", "DELETE /acp", "GET /"];

describe("docs/openapi.json", () => {
  // The handlers are never called: only the route table is read.
  const routes = [
    ...restRoutes({} as RestDeps),
    ...reviewRoutes({} as Host, {} as PeerRest, {} as ChangeStreams),
    ...loginRoutes({} as Access),
    ...agentLoginRoutes({} as Host),
    ...terminalLoginRoutes({} as LoginRunner),
  ].map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
  const documented = Object.entries(openapi.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );

  it("is OpenAPI 3.1 and documents every route of the router", () => {
    expect(openapi.openapi).toBe("3.1.0");
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.filter((route) => !documented.includes(route))).toEqual([]);
  });

  it("documents no route the server does not have", () => {
    expect(documented.filter((route) => !routes.includes(route) && !outsideRouter.includes(route))).toEqual([]);
  });

  const operations = Object.entries(openapi.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, operation })),
  );
  /** Answered without a token: the health check and the dashboard's files. */
  const publicPaths = ["/healthz", "/"];

  it("documents 401 on every route that needs the token, and on no public one", () => {
    expect(operations.filter(({ path, operation }) => !publicPaths.includes(path) && !("401" in operation.responses)).map((o) => o.name)).toEqual([]);
    expect(operations.filter(({ path, operation }) => publicPaths.includes(path) && "401" in operation.responses).map((o) => o.name)).toEqual([]);
  });

  it("documents 403 on every route (foreign Host, Origin, Sec-Fetch-Site) and 415 on every route that takes a body", () => {
    expect(operations.filter(({ operation }) => !("403" in operation.responses)).map((o) => o.name)).toEqual([]);
    const withBody = operations.filter(({ operation }) => operation.requestBody !== undefined);
    expect(withBody.map((o) => o.name)).toEqual([
      "POST /api/sessions",
      "PATCH /api/sessions/{id}",
      "POST /api/sessions/{id}/land",
      "POST /api/questions/{id}/answer",
      "POST /acp",
      "POST /api/logins",
      "POST /api/agents/{id}/logins",
      "POST /api/agents/{id}/logins/{loginId}/callback",
      "POST /api/agents/installs",
      "POST /api/sessions/{id}/comments",
      "PATCH /api/sessions/{id}/comments/{commentId}",
    ]);
    expect(withBody.filter(({ operation }) => !("415" in operation.responses)).map((o) => o.name)).toEqual([]);
  });

  it("documents 502 and 504 (the owner host unreachable) on every route relayed to another host of a fleet, and on no other", () => {
    const relayed = [...restRoutes({} as RestDeps), ...reviewRoutes({} as Host, {} as PeerRest, {} as ChangeStreams)]
      .filter((route) => route.peers === "relay")
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    expect(relayed).toHaveLength(16);
    const withOwnerErrors = operations.filter(({ operation }) => "502" in operation.responses && "504" in operation.responses).map((o) => o.name);
    expect(withOwnerErrors.sort()).toEqual(relayed.sort());
  });

  it("takes the token in the header only; a ticket only where no header can be sent", () => {
    expect(openapi.security).toEqual([{ bearer: [] }]);
    expect(Object.values(openapi.components.securitySchemes).filter((scheme) => scheme.in === "cookie" || scheme.name === "token")).toEqual([]);
    const ticketed = operations.filter(({ operation }) => operation.security?.some((requirement) => "ticket" in requirement)).map((o) => o.name);
    expect(ticketed).toEqual(["GET /api/events", "GET /acp", "GET /api/sessions/{id}/changes/events"]);
  });

  it("documents every field of an auth method as the host answers it, with its type", () => {
    const answered = authMethodsOf([
      { id: "browser", name: "Browser", description: "opens a browser" },
      { id: "key", name: "Key", type: "env_var", vars: [{ name: "KEY" }] },
      { id: "cli", name: "CLI", type: "terminal", args: ["--cli"] },
    ]);
    const fields = Object.fromEntries(
      answered.flatMap((method) =>
        Object.entries(method).map(([key, value]) => [
          key,
          Array.isArray(value) ? { type: "array", items: { type: typeof value[0] } } : { type: typeof value },
        ]),
      ),
    );
    const documented = Object.fromEntries(
      Object.entries(openapi.components.schemas.AuthMethod!.properties).map(([key, { type, items }]) => [
        key,
        items ? { type, items: { type: items.type } } : { type },
      ]),
    );
    expect(documented).toEqual(fields);
  });
});
