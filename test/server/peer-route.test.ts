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
  const A_URL = "http://127.0.0.1:7421";
  const hostA = { id: "host-a", url: A_URL };
  const ofA = new ClusterSecret(SECRET, "host-a", A_URL, now);
  const ofB = new ClusterSecret(SECRET, "host-b", "http://127.0.0.1:7422", now);
  const relayed = { kind: "peer", hostId: "host-b", purpose: "relay" };
  const proof = (headers: Record<string, string>) => headers["berth-cluster-proof"]!;

  it("lets in a peer's request with a fresh proof for this host, method and path, and knows a client that presents nothing", () => {
    expect(ofA.presence(request(ofB.headers(hostA, "relay", "GET", "/acp?agent=demo")))).toEqual(relayed);
    expect(ofA.presence(request(ofB.headers(hostA, "relay", "patch", "/api/sessions/s1"), "PATCH", "/api/sessions/s1"))).toEqual(relayed);
    expect(ofA.presence(request({ authorization: "Bearer token" }))).toEqual({ kind: "none" });
  });

  it("never sends the secret itself", () => {
    const headers = ofB.headers(hostA, "relay", "GET", "/acp");
    expect(JSON.stringify(headers)).not.toContain(SECRET);
    expect(Object.keys(headers).sort()).toEqual(["berth-cluster-proof", "berth-relayed-by"]);
  });

  it("judges a request once, however often its access is asked about", () => {
    const req = request(ofB.headers(hostA, "relay", "GET", "/acp?agent=demo"));
    expect(ofA.presence(req)).toEqual(relayed);
    expect(ofA.presence(req)).toEqual(relayed);
  });

  it("refuses a proof made with another secret, for another host, method or path, or naming another relaying host", () => {
    const otherSecret = new ClusterSecret("another-secret-0123456789", "host-b", null, now);
    const good = ofB.headers(hostA, "relay", "GET", "/acp?agent=demo");
    const refusals: Array<[string, IncomingMessage]> = [
      ["another secret", request(otherSecret.headers(hostA, "relay", "GET", "/acp?agent=demo"))],
      [
        "another URL than the host's own (a rogue hosts.url)",
        request(ofB.headers({ id: "host-a", url: "http://127.0.0.1:9999" }, "relay", "GET", "/acp?agent=demo")),
      ],
      ["another purpose than the proof says", request({ ...good, "berth-cluster-proof": proof(good).replace(/^relay\./, "read.") })],
      ["a proof without its purpose (an older version)", request({ ...good, "berth-cluster-proof": proof(good).replace(/^relay\./, "") })],
      ["another host", request(ofB.headers({ id: "host-c", url: A_URL }, "relay", "GET", "/acp?agent=demo"))],
      ["another method", request(ofB.headers(hostA, "relay", "POST", "/acp?agent=demo"))],
      ["another path", request(ofB.headers(hostA, "relay", "GET", "/acp?agent=other"))],
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
    const headers = ofB.headers(hostA, "relay", "GET", "/acp?agent=demo");
    expect(ofA.presence(request(headers))).toEqual(relayed);
    expect(ofA.presence(request(headers))).toEqual({ kind: "refused", reason: "a proof already used" });
    const early = ofB.headers(hostA, "relay", "GET", "/acp?agent=demo");
    const late = ofB.headers(hostA, "relay", "GET", "/acp?agent=demo");
    const latest = ofB.headers(hostA, "relay", "GET", "/acp?agent=demo");
    clock += 59_000;
    expect(ofA.presence(request(early))).toEqual(relayed);
    clock += 2_000;
    expect(ofA.presence(request(late))).toMatchObject({ kind: "refused", reason: expect.stringContaining("61 s from this host's clock") });
    clock -= 122_000;
    expect(ofA.presence(request(latest))).toMatchObject({ kind: "refused", reason: expect.stringContaining("-61 s from this host's clock") });
  });

  it("tells the route what the proof is for", () => {
    expect(ofA.presence(request(ofB.headers(hostA, "live-feed", "GET", "/api/own-sessions/events"), "GET", "/api/own-sessions/events"))).toEqual({
      kind: "peer",
      hostId: "host-b",
      purpose: "live-feed",
    });
  });

  it("lets no peer in on a host that registered no URL", () => {
    const noUrl = new ClusterSecret(SECRET, "host-a", null, now);
    expect(noUrl.presence(request(ofB.headers(hostA, "relay", "GET", "/acp?agent=demo")))).toMatchObject({
      kind: "refused",
      reason: expect.stringContaining("no fleet.url"),
    });
  });

  it("without a secret, lets no peer in and relays nothing", () => {
    const none = new ClusterSecret(undefined, "host-a", A_URL);
    expect(none.configured).toBe(false);
    expect(none.presence(request(ofB.headers(hostA, "relay", "GET", "/acp?agent=demo")))).toMatchObject({ kind: "refused" });
    expect(() => none.headers({ id: "host-b", url: A_URL }, "relay", "GET", "/acp")).toThrow("no cluster secret is set");
  });
});
