import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveServeSettings } from "../../src/cli/serve-options.js";
import { isLoopback } from "../../src/server/lan-addresses.js";
import { hostAllowed, loadOrCreateToken, originAllowed } from "../../src/server/auth.js";
import { cleanUp, tempDir } from "./server-harness.js";

afterEach(cleanUp);

describe("berth serve settings", () => {
  it("lays flags over the configuration file over the defaults", () => {
    const configDir = tempDir("berth-settings-");
    const env = { XDG_CONFIG_HOME: configDir, XDG_DATA_HOME: join(configDir, "data-home") };
    const defaults = resolveServeSettings({}, env, "/work");
    expect(defaults).toMatchObject({
      listenHost: "127.0.0.1",
      port: 7420,
      dataDir: join(configDir, "data-home", "berth"),
      configPath: join(configDir, "berth", "config.json"),
    });
    expect(defaults.config.releaseGrace).toBe(15_000);

    const file = join(configDir, "custom.json");
    writeFileSync(file, JSON.stringify({ releaseGrace: "5s", idleTtl: "10m", dataDir: "/srv/berth", server: { host: "::1", port: 9000 } }));
    const fromFile = resolveServeSettings({ config: file }, env, "/work");
    expect(fromFile).toMatchObject({ listenHost: "::1", port: 9000, dataDir: "/srv/berth" });
    expect(fromFile.config).toMatchObject({ releaseGrace: 5_000, idleTtl: 600_000 });

    const flagged = resolveServeSettings(
      { config: file, port: "0", host: "127.0.0.2", dataDir: "rel/data", releaseGrace: "300ms", maxActiveHold: "2h", sweepInterval: "1s" },
      env,
      "/work",
    );
    expect(flagged).toMatchObject({ listenHost: "127.0.0.2", port: 0, dataDir: "/work/rel/data" });
    expect(flagged.config).toMatchObject({ releaseGrace: 300, idleTtl: 600_000, maxActiveHold: 7_200_000, sweepInterval: 1_000 });
  });

  it("names the flag that is wrong", () => {
    const env = { XDG_CONFIG_HOME: tempDir("berth-settings-") };
    expect(() => resolveServeSettings({ port: "65536" }, env)).toThrow('--port: expected a port number from 0 to 65535, got "65536"');
    expect(() => resolveServeSettings({ port: "-1" }, env)).toThrow("--port");
    expect(() => resolveServeSettings({ sweepInterval: "0s" }, env)).toThrow("--sweep-interval: must be more than 0");
    expect(() => resolveServeSettings({ maxActiveHold: "a day" }, env)).toThrow(
      '--max-active-hold: expected a duration such as "500ms", "15s", "60m", "24h" or "7d", got "a day"',
    );
    expect(() => resolveServeSettings({ host: " " }, env)).toThrow("--host: expected an address");
    // A port browsers refuse: the dashboard and every client command would fail there.
    expect(() => resolveServeSettings({ port: "6666" }, env)).toThrow(
      "--port 6666: browsers and fetch refuse to connect to this port (one of the Fetch standard's bad ports): choose another",
    );
    expect(resolveServeSettings({ port: "6664" }, env).port).toBe(6664);
  });

  it("takes the log level from BERTH_LOG_LEVEL, an empty one as none, and names a level there is not", () => {
    const base = { XDG_CONFIG_HOME: tempDir("berth-settings-") };
    expect(resolveServeSettings({}, base).logLevel).toBe("info");
    expect(resolveServeSettings({}, { ...base, BERTH_LOG_LEVEL: "" }).logLevel).toBe("info");
    expect(resolveServeSettings({}, { ...base, BERTH_LOG_LEVEL: " debug " }).logLevel).toBe("debug");
    expect(() => resolveServeSettings({}, { ...base, BERTH_LOG_LEVEL: "verbose" })).toThrow(
      'BERTH_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    );
  });

  it("refuses a configured wait of nothing, or longer than a timer holds (it would fire at once), and a blocked port", () => {
    const configDir = tempDir("berth-settings-");
    const file = join(configDir, "waits.json");
    const withConfig = (config: object) => {
      writeFileSync(file, JSON.stringify(config));
      return () => resolveServeSettings({ config: file }, { XDG_CONFIG_HOME: configDir });
    };
    for (const key of ["initializeTimeout", "writeTimeout", "stopTimeout", "interruptTimeout", "clientFileTimeout"]) {
      expect(withConfig({ [key]: "30d" })).toThrow(`${key}: expected a wait of more than 0 and at most 24d`);
      expect(withConfig({ [key]: "0s" })).toThrow(`${key}: expected a wait of more than 0 and at most 24d`);
      expect(withConfig({ [key]: "24d" })().config[key as "writeTimeout"]).toBe(24 * 86_400_000);
    }
    expect(withConfig({ worktrees: { timeout: "25d" } })).toThrow("expected a wait of more than 0 and at most 24d");
    // The lifecycle's own durations run on a clock that holds any wait.
    expect(withConfig({ idleTtl: "60d" })().config.idleTtl).toBe(60 * 86_400_000);
    expect(withConfig({ server: { port: 6000 } })).toThrow("browsers and fetch refuse to connect to this port");
  });

  it("takes the store and the fleet's host id from the file, --store and --host-id over it; a bad one is named", () => {
    const configDir = tempDir("berth-settings-");
    const env = { XDG_CONFIG_HOME: configDir };
    expect(resolveServeSettings({}, env).config).toMatchObject({
      store: "sqlite",
      fleet: { heartbeatInterval: 5_000, hostTtl: 30_000, adopt: false },
    });
    const file = join(configDir, "fleet.json");
    writeFileSync(
      file,
      JSON.stringify({ store: "postgres://berth@db/berth", fleet: { hostId: "a", heartbeatInterval: "1s", hostTtl: "10s", adopt: true } }),
    );
    expect(resolveServeSettings({ config: file }, env).config).toMatchObject({
      store: "postgres://berth@db/berth",
      fleet: { hostId: "a", heartbeatInterval: 1_000, hostTtl: 10_000, adopt: true },
    });
    const flagged = resolveServeSettings({ config: file, store: "postgresql://me@localhost/other", hostId: "b" }, env).config;
    expect(flagged).toMatchObject({ store: "postgresql://me@localhost/other", fleet: { hostId: "b", hostTtl: 10_000 } });
    expect(() => resolveServeSettings({ store: "/var/lib/berth.db" }, env)).toThrow(
      '--store: expected "sqlite" or a postgres:// URL, got "/var/lib/berth.db"',
    );
    expect(() => resolveServeSettings({ store: "mysql://me:hunter2@db/x" }, env)).toThrow('got "mysql://me:***@db/x"');
    expect(() => resolveServeSettings({ hostId: " " }, env)).toThrow("--host-id: expected a non-empty id");
    writeFileSync(file, JSON.stringify({ store: "berth.sqlite", fleet: { heartbeatInterval: "20s", hostTtl: "30s" } }));
    expect(() => resolveServeSettings({ config: file }, env)).toThrow(
      /store: expected "sqlite" or a postgres:\/\/ URL[\s\S]*fleet: heartbeatInterval must be more than 0 and at most half of hostTtl/,
    );
    writeFileSync(file, JSON.stringify({ fleet: { adopt: "yes" } }));
    expect(() => resolveServeSettings({ config: file }, env)).toThrow(/fleet\.adopt: expected true or false/);
  });

  it("takes the client buffer budget and high-water mark from the file; a bad one is named", () => {
    const configDir = tempDir("berth-settings-");
    const env = { XDG_CONFIG_HOME: configDir };
    expect(resolveServeSettings({}, env).config.server).toMatchObject({ clientBufferBudget: 256 * 1024 * 1024, clientHighWater: 4 * 1024 * 1024 });
    const file = join(configDir, "buffers.json");
    writeFileSync(file, JSON.stringify({ server: { clientBufferBudget: "64MiB", clientHighWater: "1MiB" } }));
    expect(resolveServeSettings({ config: file }, env).config.server).toMatchObject({
      clientBufferBudget: 64 * 1024 * 1024,
      clientHighWater: 1024 * 1024,
    });
    writeFileSync(file, JSON.stringify({ server: { clientBufferBudget: "1MiB", clientHighWater: "4MiB" } }));
    expect(() => resolveServeSettings({ config: file }, env)).toThrow(/server\.clientHighWater: clientHighWater must be at most clientBufferBudget/);
    writeFileSync(file, JSON.stringify({ server: { clientBufferBudget: "lots" } }));
    expect(() => resolveServeSettings({ config: file }, env)).toThrow(
      /server\.clientBufferBudget: expected a size such as "64KiB" or "1MiB", got "lots"/,
    );
  });

  it("takes the cluster secret from the file, BERTH_CLUSTER_SECRET over it; a short one is refused without being shown", () => {
    const configDir = tempDir("berth-settings-");
    const env = { XDG_CONFIG_HOME: configDir };
    expect(resolveServeSettings({}, env).config.fleet.secret).toBeUndefined();
    const file = join(configDir, "fleet.json");
    writeFileSync(file, JSON.stringify({ fleet: { secret: "secret-from-the-file-0123" } }));
    expect(resolveServeSettings({ config: file }, env).config.fleet.secret).toBe("secret-from-the-file-0123");
    expect(resolveServeSettings({ config: file }, { ...env, BERTH_CLUSTER_SECRET: "secret-from-the-env-0123" }).config.fleet.secret).toBe(
      "secret-from-the-env-0123",
    );
    expect(() => resolveServeSettings({}, { ...env, BERTH_CLUSTER_SECRET: "short-one" })).toThrow(
      "BERTH_CLUSTER_SECRET: expected a cluster secret of at least 16 characters, got 9",
    );
    // docs/serve.md's fleet configuration loads as it is.
    const serveDoc = readFileSync(new URL("../../docs/serve.md", import.meta.url), "utf8");
    const documented = [...serveDoc.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((match) => JSON.parse(match[1]!) as Record<string, unknown>);
    writeFileSync(file, JSON.stringify(documented.find((block) => "fleet" in block)));
    expect(resolveServeSettings({ config: file }, env).config.fleet).toMatchObject({ hostId: "laptop", url: "http://10.0.0.5:7420" });
    writeFileSync(file, JSON.stringify({ fleet: { secret: "short-one" } }));
    expect(() => resolveServeSettings({ config: file }, env)).toThrow(/fleet\.secret: expected a cluster secret of at least 16 characters/);
    expect(() => resolveServeSettings({ config: file }, env)).not.toThrow(/short-one/);
  });

  it("adds --allowed-host names to the configuration's, each checked", () => {
    const configDir = tempDir("berth-settings-");
    const env = { XDG_CONFIG_HOME: configDir };
    const file = join(configDir, "proxy.json");
    writeFileSync(file, JSON.stringify({ server: { allowedHosts: ["Berth.Example.Internal."] } }));
    expect(resolveServeSettings({ config: file }, env).config.server.allowedHosts).toEqual([{ name: "berth.example.internal" }]);
    expect(resolveServeSettings({ config: file, allowedHost: ["agents.example.internal:8443"] }, env).config.server.allowedHosts).toEqual([
      { name: "berth.example.internal" },
      { name: "agents.example.internal", port: 8443 },
    ]);
    for (const bad of ["https://berth.example.internal", "*.example.internal", "berth.example.internal/", "10.0.0.5", "berth:0", "-berth", "a b"]) {
      expect(() => resolveServeSettings({ allowedHost: [bad] }, env), bad).toThrow(
        `--allowed-host: expected a host name such as "berth.example.internal", optionally with ":port", got "${bad}"`,
      );
    }
    writeFileSync(file, JSON.stringify({ server: { allowedHosts: ["berth.example.internal", "http://x"] } }));
    expect(() => resolveServeSettings({ config: file }, env)).toThrow(
      /server\.allowedHosts\.1.*expected a host name such as "berth\.example\.internal", optionally with ":port", got "http:\/\/x"/,
    );
  });

  it("knows loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) expect(isLoopback(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "berth.example", "128.0.0.1"]) expect(isLoopback(host), host).toBe(false);
  });
});

describe("access token and origins", () => {
  it("makes the token once, readable by its owner only, and keeps it", () => {
    const path = join(tempDir("berth-token-"), "token");
    const token = loadOrCreateToken(path);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadOrCreateToken(path)).toBe(token);
    expect(readFileSync(path, "utf8")).toBe(token);
    writeFileSync(path, "short");
    expect(() => loadOrCreateToken(path)).toThrow(`the access token in ${path} is too short (5 characters): delete the file to make a new one`);
  });

  it("lets in no Origin, and an Origin only with the very scheme, host and port the request was sent to", () => {
    expect(originAllowed(undefined, "127.0.0.1:7420")).toBe(true);
    expect(originAllowed("http://127.0.0.1:7420", "127.0.0.1:7420")).toBe(true);
    expect(originAllowed("http://localhost:7420", "localhost:7420")).toBe(true);
    expect(originAllowed("http://[::1]:7420", "[::1]:7420")).toBe(true);
    expect(originAllowed("http://berth.lan:7420", "berth.lan:7420")).toBe(true);
    // Berth speaks plain HTTP: an https page of the same host and port is another origin, unless a proxy's name is configured.
    expect(originAllowed("https://127.0.0.1:7420", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed("https://localhost", "localhost")).toBe(false);
    expect(originAllowed("https://berth.example", "berth.example")).toBe(false);
    expect(originAllowed("https://berth.example", "berth.example", [{ name: "berth.example" }])).toBe(true);
    // Another port of the same machine is another site.
    expect(originAllowed("http://localhost:7421", "localhost:7420")).toBe(false);
    expect(originAllowed("http://127.0.0.1:3000", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed("http://localhost:7420", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed("http://evil.example", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed("null", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed("file://", "127.0.0.1:7420")).toBe(false);
    expect(originAllowed("http://127.0.0.1:7420", undefined)).toBe(false);
  });

  it("lets in a reverse proxy's names: as Host, and as a page's origin on the default port or the one given", () => {
    const allowed = [{ name: "berth.example.internal" }, { name: "agents.example.internal", port: 8443 }];
    expect(hostAllowed("berth.example.internal", "127.0.0.1", allowed, "mybox")).toBe(true);
    expect(hostAllowed("BERTH.example.internal:443", "127.0.0.1", allowed, "mybox")).toBe(true);
    expect(hostAllowed("agents.example.internal:8443", "127.0.0.1", allowed, "mybox")).toBe(true);
    expect(hostAllowed("evil.example", "127.0.0.1", allowed, "mybox")).toBe(false);
    expect(hostAllowed("berth.example.internal.evil.example", "127.0.0.1", allowed, "mybox")).toBe(false);
    // The proxy may pass Host on or rewrite it to Berth's own address.
    for (const hostHeader of ["berth.example.internal", "127.0.0.1:7420"]) {
      expect(originAllowed("https://berth.example.internal", hostHeader, allowed), hostHeader).toBe(true);
      expect(originAllowed("http://berth.example.internal", hostHeader, allowed), hostHeader).toBe(true);
      expect(originAllowed("https://agents.example.internal:8443", hostHeader, allowed), hostHeader).toBe(true);
      // Another port of the proxy's name is another site.
      expect(originAllowed("https://berth.example.internal:3000", hostHeader, allowed), hostHeader).toBe(false);
      expect(originAllowed("https://agents.example.internal", hostHeader, allowed), hostHeader).toBe(false);
      expect(originAllowed("https://evil.example", hostHeader, allowed), hostHeader).toBe(false);
    }
  });

  it("lets in Host names of this machine only: IP literals, localhost, the listen address and the machine's name", () => {
    for (const host of [
      "127.0.0.1:7420",
      "[::1]:7420",
      "192.168.1.20:7420",
      "localhost:7420",
      "LOCALHOST.:8000",
      "app.localhost:7420",
      "berth.lan:7420",
      "mybox:7420",
      "mybox.local:7420",
      undefined,
    ]) {
      expect(hostAllowed(host, "berth.lan", [], "mybox"), String(host)).toBe(true);
    }
    // A rebound name: the attacker's page keeps its own name while it resolves to 127.0.0.1.
    for (const host of [
      "evil.example:7420",
      "127.0.0.1.nip.io:7420",
      "localhost.evil.example:7420",
      "mybox.evil.example",
      "",
      "a b",
      "user@127.0.0.1",
    ]) {
      expect(hostAllowed(host, "127.0.0.1", [], "mybox"), host).toBe(false);
    }
  });
});
