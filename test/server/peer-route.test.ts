import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { ClusterSecret } from "../../src/server/cluster-secret.js";
import { routeOf } from "../../src/server/peer-route.js";

/** A request as a host's HTTP server gets it: headers lower-cased, the path with its query. */
const request = (headers: Record<string, string>, method = "GET", url = "/acp?agent=demo") =>
  ({
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    method,
    url,
  }) as unknown as IncomingMessage;
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
  let clock = Date.parse("2026-12-01T12:00:00Z");
  const now = () => clock;
  const ofA = new ClusterSecret(SECRET, "host-a", now);
  const ofB = new ClusterSecret(SECRET, "host-b", now);
  const proof = (headers: Record<string, string>) => headers["berth-cluster-proof"]!;

  it("lets in a peer's request with a fresh proof for this host, method and path, and knows a client that presents nothing", () => {
    expect(ofA.presence(request(ofB.headers("host-a", "GET", "/acp?agent=demo")))).toEqual({ kind: "peer", hostId: "host-b" });
    expect(ofA.presence(request(ofB.headers("host-a", "patch", "/api/sessions/s1"), "PATCH", "/api/sessions/s1"))).toEqual({
      kind: "peer",
      hostId: "host-b",
    });
    expect(ofA.presence(request({ authorization: "Bearer token" }))).toEqual({ kind: "none" });
  });

  it("never sends the secret itself", () => {
    const headers = ofB.headers("host-a", "GET", "/acp");
    expect(JSON.stringify(headers)).not.toContain(SECRET);
    expect(Object.keys(headers).sort()).toEqual(["berth-cluster-proof", "berth-relayed-by"]);
  });

  it("judges a request once, however often its access is asked about", () => {
    const req = request(ofB.headers("host-a", "GET", "/acp?agent=demo"));
    expect(ofA.presence(req)).toEqual({ kind: "peer", hostId: "host-b" });
    expect(ofA.presence(req)).toEqual({ kind: "peer", hostId: "host-b" });
  });

  it("refuses a proof made with another secret, for another host, method or path, or naming another relaying host", () => {
    const otherSecret = new ClusterSecret("another-secret-0123456789", "host-b", now);
    const good = ofB.headers("host-a", "GET", "/acp?agent=demo");
    const refusals: Array<[string, IncomingMessage]> = [
      ["another secret", request(otherSecret.headers("host-a", "GET", "/acp?agent=demo"))],
      ["another host", request(ofB.headers("host-c", "GET", "/acp?agent=demo"))],
      ["another method", request(ofB.headers("host-a", "POST", "/acp?agent=demo"))],
      ["another path", request(ofB.headers("host-a", "GET", "/acp?agent=other"))],
      ["another relaying host", request({ ...good, "berth-relayed-by": "host-c" })],
      ["the secret itself", request({ "berth-relayed-by": "host-b", "berth-cluster-secret": SECRET })],
      ["no proof", request({ "berth-relayed-by": "host-b" })],
      ["no host id", request({ "berth-cluster-proof": proof(good) })],
      ["an empty host id", request({ "berth-relayed-by": "", "berth-cluster-proof": proof(good) })],
      ["a malformed proof", request({ "berth-relayed-by": "host-b", "berth-cluster-proof": `${proof(good)}.x` })],
      ["a short MAC", request({ "berth-relayed-by": "host-b", "berth-cluster-proof": proof(good).slice(0, -4) })],
    ];
    for (const [what, req] of refusals) expect(ofA.presence(req), what).toMatchObject({ kind: "refused" });
  });

  it("refuses a proof used before, and one further than a minute from this host's clock", () => {
    const headers = ofB.headers("host-a", "GET", "/acp?agent=demo");
    expect(ofA.presence(request(headers))).toEqual({ kind: "peer", hostId: "host-b" });
    expect(ofA.presence(request(headers))).toEqual({ kind: "refused", reason: "a proof already used" });
    const early = ofB.headers("host-a", "GET", "/acp?agent=demo");
    const late = ofB.headers("host-a", "GET", "/acp?agent=demo");
    const latest = ofB.headers("host-a", "GET", "/acp?agent=demo");
    clock += 59_000;
    expect(ofA.presence(request(early))).toEqual({ kind: "peer", hostId: "host-b" });
    clock += 2_000;
    expect(ofA.presence(request(late))).toMatchObject({ kind: "refused", reason: expect.stringContaining("61 s from this host's clock") });
    clock -= 122_000;
    expect(ofA.presence(request(latest))).toMatchObject({ kind: "refused", reason: expect.stringContaining("-61 s from this host's clock") });
  });

  it("without a secret, lets no peer in and relays nothing", () => {
    const none = new ClusterSecret(undefined, "host-a");
    expect(none.configured).toBe(false);
    expect(none.presence(request(ofB.headers("host-a", "GET", "/acp?agent=demo")))).toMatchObject({ kind: "refused" });
    expect(() => none.headers("host-b", "GET", "/acp")).toThrow("no cluster secret is set");
  });
});
