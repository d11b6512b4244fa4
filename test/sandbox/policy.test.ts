import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { matchingLocation } from "../../src/sandbox/sandbox-locations.js";
import {
  configuredPolicy,
  InvalidSandboxError,
  parseSandboxRequest,
  sessionPolicy,
  storedPolicy,
  strictestPolicy,
} from "../../src/sandbox/policy.js";

describe("sandbox policy", () => {
  it("a request is checked, naming where it came from and what was wrong", () => {
    expect(parseSandboxRequest({ mode: "workspace-write" }, "sandbox")).toEqual({ mode: "workspace-write" });
    expect(() => parseSandboxRequest({ mode: "strict" }, "sandbox")).toThrow('sandbox.mode: expected "off" or "workspace-write", got "strict"');
    expect(() => parseSandboxRequest({ mode: "off", network: false }, '_meta["berth/sandbox"]')).toThrow(
      '_meta["berth/sandbox"].network: expected "on" or "off", got false',
    );
    expect(() => parseSandboxRequest({ mode: "off", disk: "no" }, "sandbox")).toThrow(InvalidSandboxError);
    expect(() => parseSandboxRequest("workspace-write", "sandbox")).toThrow(/^sandbox: expected \{/);
  });

  it("the agent's entry goes over the host's, field by field; nothing configured is off with the network", () => {
    expect(configuredPolicy(undefined, undefined)).toEqual({ mode: "off", network: "on" });
    expect(configuredPolicy({ network: "on" }, { mode: "workspace-write", network: "off" })).toEqual({ mode: "workspace-write", network: "on" });
    expect(configuredPolicy({ mode: "off" }, { mode: "workspace-write" })).toEqual({ mode: "off", network: "on" });
  });

  it("a location goes over the host's; with the agent's entry the stricter of the two wins", () => {
    const at = (layer: Parameters<typeof configuredPolicy>[0]) => ({ key: "~/work/client-x", layer });
    const sandboxed = { mode: "workspace-write" } as const;
    // Nothing configured but the location: its sandbox.
    expect(configuredPolicy(undefined, undefined, at({ mode: "workspace-write", network: "off" }))).toEqual({
      mode: "workspace-write",
      network: "off",
      location: "~/work/client-x",
    });
    // An agent the entry exempts is still sandboxed in the location, and the location cannot exempt the agent.
    expect(configuredPolicy({ mode: "off" }, undefined, at(sandboxed))).toMatchObject({ mode: "workspace-write", network: "on" });
    expect(configuredPolicy(sandboxed, undefined, at({ mode: "off" }))).toMatchObject({ mode: "workspace-write", network: "on" });
    // No network if either says so.
    expect(configuredPolicy({ network: "off" }, undefined, at({ ...sandboxed, network: "on" }))).toMatchObject({ network: "off" });
    expect(configuredPolicy({ network: "on" }, { network: "off" }, at(sandboxed))).toMatchObject({ mode: "workspace-write", network: "off" });
    // A location that leaves a field out takes the host's, as the entry does: the host's sandbox stays unless both lift it.
    expect(configuredPolicy({ mode: "off" }, sandboxed, at({ network: "off" }))).toMatchObject({ mode: "workspace-write", network: "off" });
    expect(configuredPolicy({ mode: "off" }, sandboxed, at({ mode: "off" }))).toMatchObject({ mode: "off", network: "on" });
  });

  it("a client's looser request in a configured location is refused, naming the location", () => {
    const configured = configuredPolicy(undefined, undefined, { key: "~/work/client-x", layer: { mode: "workspace-write", network: "off" } });
    expect(() => sessionPolicy(configured, { mode: "off" }, "sandbox")).toThrow(
      'sandbox.mode: "off" is refused: this host\'s configuration sandboxes this agent in ~/work/client-x (sandbox.locations) (mode "workspace-write")',
    );
    expect(() => sessionPolicy(configured, { mode: "workspace-write", network: "on" }, "sandbox")).toThrow(/no network$/);
    // What is stored with the session is the policy alone.
    expect(sessionPolicy(configured, undefined, "sandbox")).toEqual({ mode: "workspace-write", network: "off" });
  });

  it("a session's location is the longest configured directory holding it, by real path, with ~ the home", () => {
    const root = mkdtempSync(join(tmpdir(), "berth-locations-"));
    try {
      const home = join(root, "home");
      mkdirSync(join(home, "work", "client-x", "app"), { recursive: true });
      symlinkSync(join(home, "work"), join(root, "work-link"));
      const locations = { "~/work": "work", "~/work/client-x": "client-x", [join(root, "other")]: "other" };
      expect(matchingLocation(locations, join(home, "work", "client-x", "app"), home)).toEqual({ key: "~/work/client-x", layer: "client-x" });
      expect(matchingLocation(locations, join(home, "work", "client-x"), home)?.layer).toBe("client-x");
      expect(matchingLocation(locations, join(home, "work", "client-y"), home)?.layer).toBe("work");
      // By path segments: client-xy is not in client-x.
      expect(matchingLocation(locations, join(home, "work", "client-xy"), home)?.layer).toBe("work");
      // Reached through a symbolic link, it is the same directory.
      expect(matchingLocation(locations, join(root, "work-link", "client-x", "app"), home)?.layer).toBe("client-x");
      expect(matchingLocation(locations, join(root, "elsewhere"), home)).toBeUndefined();
      expect(matchingLocation({ "/": "all" }, join(root, "elsewhere"), home)?.layer).toBe("all");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("the configuration's sandbox.locations is checked: a key must be a path, an entry a sandbox", () => {
    const config = parseConfig({ sandbox: { locations: { "~/work/client-x": { mode: "workspace-write", network: "off", binds: ["~/.m2"] } } } });
    expect(config.sandbox.locations).toEqual({ "~/work/client-x": { mode: "workspace-write", network: "off", binds: ["~/.m2"] } });
    expect(() => parseConfig({ sandbox: { locations: { "work/client-x": { mode: "workspace-write" } } } })).toThrow(
      'sandbox.locations.work/client-x: bad key: expected an absolute path or one under the home ("~/...")',
    );
    expect(() => parseConfig({ sandbox: { locations: { "/w": { mode: "strict" } } } })).toThrow(
      'sandbox.locations./w.mode: expected "off" or "workspace-write"',
    );
    expect(() => parseConfig({ sandbox: { locations: { "/w": { hide: [] } } } })).toThrow('sandbox.locations./w: unknown key "hide"');
  });

  it("a client may make the configured policy stricter, never looser", () => {
    const open = { mode: "off", network: "on" } as const;
    const closed = { mode: "workspace-write", network: "off" } as const;
    expect(sessionPolicy(open, undefined, "sandbox")).toEqual(open);
    expect(sessionPolicy(open, { mode: "workspace-write" }, "sandbox")).toEqual({ mode: "workspace-write", network: "on" });
    expect(sessionPolicy(closed, { mode: "workspace-write" }, "sandbox")).toEqual(closed);
    expect(() => sessionPolicy(closed, { mode: "off" }, "sandbox")).toThrow(/sandbox\.mode: "off" is refused/);
    expect(() => sessionPolicy(closed, { mode: "workspace-write", network: "on" }, "sandbox")).toThrow(/sandbox\.network: "on" is refused/);
    // A configured network "off" without a mode is every sandbox's: a client asking for one gets no network.
    const offline = { mode: "off", network: "off" } as const;
    expect(sessionPolicy(offline, { mode: "workspace-write" }, "sandbox")).toEqual({ mode: "workspace-write", network: "off" });
    expect(() => sessionPolicy(offline, { mode: "workspace-write", network: "on" }, "sandbox")).toThrow(/sandbox\.network: "on" is refused/);
  });

  it("a stored policy is read back; anything else is none (a session older than sandboxes)", () => {
    expect(storedPolicy({ mode: "workspace-write", network: "off" })).toEqual({ mode: "workspace-write", network: "off" });
    expect(storedPolicy(undefined)).toBeUndefined();
    expect(storedPolicy({ mode: "bogus" })).toBeUndefined();
  });

  it("what serves several sessions is sandboxed if any of them is", () => {
    expect(strictestPolicy([])).toEqual({ mode: "off", network: "on" });
    expect(
      strictestPolicy([
        { mode: "off", network: "on" },
        { mode: "workspace-write", network: "off" },
      ]),
    ).toEqual({ mode: "workspace-write", network: "off" });
  });
});
