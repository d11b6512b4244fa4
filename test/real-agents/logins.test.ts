import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { methods, type AuthMethod, type ClientCapabilities } from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { berthWords } from "../../src/config/invocation.js";
import { NoTerminalLoginError } from "../../src/logins/login-command.js";
import { descendantsOf } from "../support/process-table.js";
import { AcpTestClient, cleanUp, startFixture, waitUntil, type BerthFixture } from "../server/server-harness.js";
import {
  DirectAgent,
  errorShape,
  prepareRealAgent,
  realAgentInstalled,
  stopAllDirectAgents,
  type RealAgentEnvironment,
} from "../support/real-agents.js";

/**
 * Logging in to real agents through Berth, against the same agents run directly: the auth methods
 * each client sees for the capabilities it declared (terminal logins as a local `berth login`
 * command), and `logout`, which must log out as it does directly.
 */

const environments: RealAgentEnvironment[] = [];
/** opencode takes seconds to start, and the first test starts each agent five times: minutes on a loaded machine. */
const SLOW_STARTS_MS = 240_000;

afterEach(async () => {
  await stopAllDirectAgents();
  await cleanUp();
  for (const env of environments.splice(0)) env.cleanup();
});

/** A process's `/proc` file, empty once it is gone. */
function procFile(pid: number, name: "cmdline" | "environ"): string {
  try {
    return readFileSync(`/proc/${pid}/${name}`, "utf8");
  } catch {
    return "";
  }
}

async function prepare(name: "codex"): Promise<RealAgentEnvironment> {
  const env = await prepareRealAgent(name);
  environments.push(env);
  return env;
}

const fsAndTerminal = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };
/** What clients declare: nothing, terminal logins, a Zed-like client (terminal logins and `_meta["terminal-auth"]`). */
const declarations: Record<string, ClientCapabilities> = {
  nothing: {},
  "auth.terminal": { ...fsAndTerminal, auth: { terminal: true } },
  "_meta terminal-auth": { ...fsAndTerminal, _meta: { "terminal-auth": true } },
  "a Zed-like client": { ...fsAndTerminal, auth: { terminal: true }, _meta: { "terminal-auth": true } },
};

async function directAuthMethods(env: RealAgentEnvironment, capabilities: ClientCapabilities): Promise<AuthMethod[]> {
  const agent = await DirectAgent.start(env);
  try {
    return (await agent.initialize(capabilities)).authMethods ?? [];
  } finally {
    await agent.stop();
  }
}

/** A method's `_meta["terminal-auth"]` as a client is told to run it through Berth: `berth login` attached to the host. */
function throughBerth(methods: AuthMethod[], agent: string, baseUrl: string): AuthMethod[] {
  return methods.map((method) => {
    const given = method._meta?.["terminal-auth"] as Record<string, unknown> | undefined;
    if (!given) return method;
    const [command, ...args] = berthWords(undefined, "program");
    const local = { ...given, command, args: [...args, "login", "--agent", agent, "--method", method.id, "--url", baseUrl] };
    return { ...method, _meta: { ...method._meta, "terminal-auth": local } };
  });
}

for (const name of ["claude", "opencode"] as const) {
  describe.skipIf(!realAgentInstalled(name))(`${name}'s terminal login through Berth`, () => {
    // One environment and one data directory for these tests, each with a host of its own: an agent start-up takes
    // seconds, and the agent's answers do not change within an environment. Berth stores its probe's answer in the
    // data directory and the direct answers are kept here, so only the first test to need one starts the agent for it.
    let env: RealAgentEnvironment;
    const directAnswers = new Map<string, AuthMethod[]>();
    beforeAll(async () => {
      env = await prepareRealAgent(name);
    });
    afterAll(() => env?.cleanup());
    const startHost = () => startFixture({ config: { agents: { [name]: env.entry } }, dataDir: join(env.root, "berth-data"), workDir: env.cwd });
    async function directAnswer(declared: string): Promise<AuthMethod[]> {
      const known = directAnswers.get(declared) ?? (await directAuthMethods(env, declarations[declared]!));
      directAnswers.set(declared, known);
      return known;
    }

    it(
      "each client sees the methods it would see directly for what it declared; terminal-auth commands are berth login on this host",
      async () => {
        const fixture = await startHost();
        for (const [declared, capabilities] of Object.entries(declarations)) {
          const direct = await directAnswer(declared);
          const client = await fixture.connect({ agent: name, capabilities });
          expect(client.initialized.authMethods ?? [], declared).toEqual(throughBerth(direct, name, fixture.url));
        }
        // Claude offers its login only to a client that declared terminal logins: Berth declares them for every client.
        expect((await fixture.connect({ agent: name, capabilities: declarations["a Zed-like client"] })).initialized.authMethods).toHaveLength(1);
      },
      SLOW_STARTS_MS,
    );

    it(
      "names the host as the client reached it (localhost here), over WebSocket and Streamable HTTP",
      async () => {
        const fixture = await startHost();
        const port = new URL(fixture.url).port;
        const acpUrl = fixture.acpUrl.replace("127.0.0.1", "localhost");
        for (const transport of ["websocket", "http"] as const) {
          const client = await connectAt(fixture, acpUrl, name, transport);
          const [method] = client.initialized.authMethods ?? [];
          const local = method?._meta?.["terminal-auth"] as { args: string[] } | undefined;
          expect(local?.args.slice(-2), transport).toEqual(["--url", `http://localhost:${port}`]);
        }
      },
      SLOW_STARTS_MS,
    );

    it(
      "runs the agent's own command on the host side for its terminal login",
      async () => {
        const fixture = await startHost();
        const [method] = await directAnswer("a Zed-like client");
        const own = method!._meta!["terminal-auth"] as { command: string; args: string[]; label: string };
        const { logins } = fixture.berth.host;
        const size = { cols: 80, rows: 24 };
        const attachment = await logins.attach(name, method!.id, size);
        try {
          // Claude names the node and script it runs as; opencode its own command. The pseudo-terminal's wrapper
          // becomes that command, with the agent's configured environment.
          const [login] = logins.list();
          const expected = [own.command, ...own.args].join("\0");
          const ownCommand = () => descendantsOf(login!.pid).find((pid) => procFile(pid, "cmdline").replace(/\0$/, "") === expected);
          await waitUntil(() => ownCommand() !== undefined, "the login runs the agent's own command", SLOW_STARTS_MS);
          const environment = procFile(ownCommand()!, "environ").split("\0");
          for (const [key, value] of Object.entries(env.entry.env ?? {})) expect(environment).toContain(`${key}=${value}`);
        } finally {
          attachment.detach();
          await logins.stop(name);
        }
        await expect(logins.attach(name, "no-such-method", size)).rejects.toThrow(NoTerminalLoginError);
      },
      SLOW_STARTS_MS,
    );
  });
}

describe.skipIf(!realAgentInstalled("codex"))("codex's logout through Berth", () => {
  it(
    "logs out as directly: session/new then answers -32000, in new children too, and the remembered login is forgotten",
    async () => {
      const env = await prepare("codex");
      // Directly: logged in, logout, and session/new is refused.
      const direct = await DirectAgent.start(env);
      await direct.authenticate("openai-api-key");
      await direct.newSession(env.cwd);
      expect(await direct.agent.request(methods.agent.logout, {})).toEqual({});
      const directRefusal = errorShape(await direct.newSession(env.cwd).catch((error: unknown) => error));
      expect(directRefusal).toMatchObject({ code: -32000 });
      await direct.stop();

      const fixture = await startFixture({
        config: { agents: { codex: env.entry }, rememberLogins: "file", releaseGrace: "50ms" },
        workDir: env.cwd,
      });
      const host = fixture.berth.host;
      const client = await fixture.connect({ agent: "codex" });
      expect(host.agentLoginState("codex")).toBe("unknown");
      await client.agent.request(methods.agent.authenticate, { methodId: "openai-api-key" });
      expect(host.agentLoginState("codex")).toBe("logged-in");
      const sessionId = await client.newSession(env.cwd);

      // Its child runs: it is the one told, no other child is started for it.
      const asked = () =>
        host.recentRecords(1000).filter(({ record }) => record.kind === "agent_asked" && (record as { method?: string }).method === "logout").length;
      expect(await client.agent.request(methods.agent.logout, {})).toEqual({});
      await host.committed();
      expect(asked()).toBe(0);
      expect(readLogins(fixture)).toEqual({});
      expect(errorShape(await client.newSession(env.cwd).catch((error: unknown) => error))).toEqual(directRefusal);
      expect(host.agentLoginState("codex")).toBe("needs-login");

      // Once its child is released, a new child is not logged in either.
      await client.agent.request(methods.agent.session.close, { sessionId });
      await waitUntil(() => host.getSession(sessionId)?.pid === null, "the agent child to be released");
      expect(errorShape(await client.newSession(env.cwd).catch((error: unknown) => error))).toEqual(directRefusal);

      // Logged in again and out with no child running: a child is started to log out.
      await client.agent.request(methods.agent.authenticate, { methodId: "openai-api-key" });
      expect(host.agentLoginState("codex")).toBe("logged-in");
      expect(readLogins(fixture)).toHaveProperty("codex");
      expect(await client.agent.request(methods.agent.logout, {})).toEqual({});
      await host.committed();
      expect(asked()).toBe(1);
      expect(readLogins(fixture)).toEqual({});
      expect(host.agentLoginState("codex")).toBe("unknown");
      expect(errorShape(await client.newSession(env.cwd).catch((error: unknown) => error))).toEqual(directRefusal);

      // And after a restart of the host: nothing is replayed.
      await fixture.stop();
      const again = await startFixture({
        dataDir: fixture.dataDir,
        workDir: env.cwd,
        config: { agents: { codex: env.entry }, rememberLogins: "file" },
      });
      const returning = await again.connect({ agent: "codex" });
      expect(errorShape(await returning.newSession(env.cwd).catch((error: unknown) => error))).toEqual(directRefusal);
    },
    SLOW_STARTS_MS,
  );
});

function readLogins(fixture: BerthFixture): Record<string, unknown> {
  const file = join(fixture.dataDir, "agent-logins.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
}

function connectAt(fixture: BerthFixture, acpUrl: string, agent: string, transport: "websocket" | "http"): Promise<AcpTestClient> {
  return AcpTestClient.connect(acpUrl, { token: fixture.token, agent, transport, capabilities: declarations["a Zed-like client"] });
}
