import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { callbackTarget, deliverCallback } from "../../src/host/login-callback.js";

const captured = (redirect: string) => `https://provider.invalid/authorize?redirect_uri=${encodeURIComponent(redirect)}&state=S`;

describe("the address a browser ended on, for the agent's callback", () => {
  it("is taken on any loopback name at the redirect_uri's port and path", () => {
    for (const pasted of [
      "http://localhost:1455/auth/callback?code=C",
      "http://127.0.0.1:1455/auth/callback?code=C",
      "http://[::1]:1455/auth/callback?code=C",
    ])
      expect(callbackTarget(captured("http://localhost:1455/auth/callback"), pasted).href).toBe(pasted);
  });

  it.each([
    ["https://localhost:1455/auth/callback?code=C", "must be on this host's loopback"],
    ["http://10.0.0.5:1455/auth/callback?code=C", "must be on this host's loopback"],
    ["http://localhost.evil.invalid:1455/auth/callback", "must be on this host's loopback"],
    ["http://localhost:22/auth/callback?code=C", "got port 22"],
    ["http://localhost:1455/admin?code=C", "path /admin"],
    ["callback?code=C", "not an address"],
  ])("refuses %s", (pasted, says) => {
    expect(() => callbackTarget(captured("http://localhost:1455/auth/callback"), pasted)).toThrow(says);
  });

  it("refuses when the agent's address names no loopback redirect_uri", () => {
    expect(() => callbackTarget("https://provider.invalid/authorize?state=S", "http://localhost:1455/cb")).toThrow("names no redirect_uri");
    expect(() => callbackTarget(captured("https://app.example/cb"), "http://localhost:1455/cb")).toThrow("is not on this host's loopback");
  });

  it("is requested from the host, its redirect not followed", async () => {
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url!);
      res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect(await deliverCallback(new URL(`http://localhost:${port}/callback?code=C`))).toBe(302);
      expect(asked).toEqual(["/callback?code=C"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("says the callback did not answer when nothing listens", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    await expect(deliverCallback(new URL(`http://127.0.0.1:${port}/callback`))).rejects.toThrow("did not answer");
  });
});
