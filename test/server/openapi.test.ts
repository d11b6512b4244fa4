import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Access } from "../../src/server/access.js";
import { loginRoutes } from "../../src/server/login-routes.js";
import { restRoutes, type RestDeps } from "../../src/server/rest-routes.js";

const openapi = JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8")) as {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};
/** Served outside the router: ACP (both transport profiles) and the dashboard's files. */
const outsideRouter = ["GET /acp", "POST /acp", "DELETE /acp", "GET /"];

describe("docs/openapi.json", () => {
  // The handlers are never called: only the route table is read.
  const routes = [...restRoutes({} as RestDeps), ...loginRoutes({} as Access)].map(
    (route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`,
  );
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

  it("documents 401 on every route that needs the token", () => {
    const unguarded = Object.entries(openapi.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) =>
        path !== "/healthz" && !("401" in operation.responses) ? [`${method} ${path}`] : [],
      ),
    );
    expect(unguarded).toEqual([]);
  });
});
