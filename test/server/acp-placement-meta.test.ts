// Issue 27, item 3: `_meta["berth/host"]` is Berth's `{ name, version }` in `initialize`; a new session's fleet host is
// `_meta["berth/placement"]`, and the old placement key is still read in `session/new` until 0.3.0. On one host (no
// fleet) a named other host is refused, naming the key it was named with; the fleet's placement is in
// test/fleet/routing.test.ts.
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, startFixture } from "./server-harness.js";

afterEach(cleanUp);

const notInAFleet = (key: string) => ({
  code: -32602,
  message: `Invalid params: _meta["${key}"] names host "elsewhere", but this host is not in a fleet`,
  data: { key },
});

describe("the placement's own `_meta` key, and the deprecated one", () => {
  it("reads berth/placement, still reads berth/host in session/new, refuses two different hosts, and keeps berth/host for initialize", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    expect(client.initialized._meta).toMatchObject({ "berth/host": { name: "berth", version: expect.any(String) } });

    await expect(client.newSession(fixture.workDir, { "berth/placement": "elsewhere" })).rejects.toMatchObject(notInAFleet("berth/placement"));
    await expect(client.newSession(fixture.workDir, { "berth/host": "elsewhere" })).rejects.toMatchObject(notInAFleet("berth/host"));
    // Both keys naming the same host: the new one is the one read.
    await expect(client.newSession(fixture.workDir, { "berth/placement": "elsewhere", "berth/host": "elsewhere" })).rejects.toMatchObject(
      notInAFleet("berth/placement"),
    );
    await expect(client.newSession(fixture.workDir, { "berth/placement": "one", "berth/host": "other" })).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid params: _meta["berth/placement"] names host "one" and the deprecated _meta["berth/host"] host "other": name one',
    });
    await expect(client.newSession(fixture.workDir, { "berth/placement": 7 })).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid params: _meta["berth/placement"] must be a non-empty string, got 7',
    });
    expect(fixture.berth.host.listSessions()).toEqual([]);
    // berth/host as initialize answers it (an object, copied along by a client) places nothing and refuses nothing.
    const copied = await client.newSession(fixture.workDir, { "berth/host": client.initialized._meta?.["berth/host"] });
    expect(fixture.berth.host.getSession(copied)).toMatchObject({ state: "live" });

    // Without a placement the session is created here, and the connection carries on.
    const sessionId = await client.newSession(fixture.workDir);
    expect(fixture.berth.host.getSession(sessionId)).toMatchObject({ state: "live" });
  });
});
