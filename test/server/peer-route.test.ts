import * as crypto from "node:crypto";
import type { IncomingMessage } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { ClusterSecret } from "../../src/server/cluster-secret.js";
import { routeOf } from "../../src/server/peer-route.js";

// The secret's check is watched: it must compare, in constant time, whatever the length presented.
vi.mock("node:crypto", async (actual) => {
  const real = await actual<typeof import("node:crypto")>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const SECRET = "cluster-secret-0123456789";

describe("routing's decision", () => {
  const owner = { id: "host-a", url: "http://127.0.0.1:7421", online: true };

  it("relays to an online owner with a URL, when this host may relay", () => {
    expect(routeOf(owner, { canRelay: true })).toEqual({ kind: "relay", owner: { id: "host-a", url: "http://127.0.0.1:7421" } });
  });

  it("answers here its own sessions, an offline owner's, one with no URL, and anything without relaying", () => {
    expect(routeOf(undefined, { canRelay: true })).toEqual({ kind: "here" });
    expect(routeOf({ ...owner, online: false }, { canRelay: true })).toEqual({ kind: "here" });
    expect(routeOf({ ...owner, url: null }, { canRelay: true })).toEqual({ kind: "here" });
    expect(routeOf(owner, { canRelay: false })).toEqual({ kind: "here" });
  });
});

describe("the cluster secret", () => {
  const cluster = new ClusterSecret(SECRET);

  it("lets in a peer that presents it with its host id, and knows a client that presents nothing", () => {
    expect(cluster.presence(request(cluster.headers("host-b")))).toEqual({ kind: "peer", hostId: "host-b" });
    expect(cluster.presence(request({ authorization: "Bearer token" }))).toEqual({ kind: "none" });
  });

  it("refuses a peer with a wrong, missing or longer secret, or no host id", () => {
    const refused: Array<Record<string, string>> = [
      { "berth-relayed-by": "host-b" },
      { "berth-relayed-by": "host-b", "berth-cluster-secret": "cluster-secret-0123456780" },
      { "berth-relayed-by": "host-b", "berth-cluster-secret": `${SECRET}x` },
      { "berth-cluster-secret": SECRET },
      { "berth-relayed-by": "", "berth-cluster-secret": SECRET },
    ];
    for (const headers of refused) {
      expect(cluster.presence(request(headers)), JSON.stringify(headers)).toEqual({ kind: "refused" });
    }
  });

  it("compares a presented secret in constant time whatever its length, so its length tells nothing", () => {
    const compared = vi.mocked(crypto.timingSafeEqual);
    for (const presented of ["x", SECRET.slice(1), `${SECRET}x`, "y".repeat(4096)]) {
      compared.mockClear();
      expect(cluster.presence(request({ "berth-relayed-by": "host-b", "berth-cluster-secret": presented }))).toEqual({ kind: "refused" });
      expect(compared, presented).toHaveBeenCalledOnce();
      const [given, expected] = compared.mock.calls[0]!;
      expect(given.byteLength).toBe(expected.byteLength);
    }
  });

  it("without a secret, lets no peer in and relays nothing", () => {
    const none = new ClusterSecret(undefined);
    expect(none.configured).toBe(false);
    expect(none.presence(request({ "berth-relayed-by": "host-b", "berth-cluster-secret": SECRET }))).toEqual({ kind: "refused" });
    expect(() => none.headers("host-b")).toThrow("no cluster secret is set");
  });
});
