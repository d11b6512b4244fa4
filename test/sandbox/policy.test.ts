import { describe, expect, it } from "vitest";
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
