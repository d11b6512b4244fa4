import { describe, expect, it } from "vitest";
import { authMethodsOf } from "../../src/protocol/auth-methods.js";
import { authMethodsForClient, terminalLoginOf, terminalLoginSupportOf } from "../../src/protocol/terminal-logins.js";

/** An agent's launch as Berth's configuration gives it. */
const launch = { command: "/usr/bin/node", args: ["/opt/agent/index.js"], env: { AGENT_HOME: "/srv/agent", MODE: "acp" } };

/** A type-terminal method with a terminal-auth command, as claude-agent-acp offers it to a client declaring both. */
const terminal = {
  id: "agent-login",
  name: "Log in",
  type: "terminal",
  args: ["--cli"],
  env: { MODE: "login" },
  _meta: {
    "terminal-auth": { command: "/usr/bin/node", args: ["/opt/agent/index.js", "--cli"], env: { TERM_LOGIN: "1" }, label: "Agent Login" },
    other: 1,
  },
};
/** A method the agent runs itself, naming a terminal-auth command too (as opencode's). */
const agentMethod = { id: "agent-run", name: "Agent login", _meta: { "terminal-auth": { command: "agent", args: ["auth", "login"], label: "L" } } };
const envMethod = { id: "key", name: "Key", type: "env_var", vars: [{ name: "KEY" }] };
const local = (methodId: string) => ["berth", "login", "--agent", "a", "--method", methodId];

describe("terminal logins as each client sees them", () => {
  it("tells declarations apart: none, auth.terminal, and _meta terminal-auth with or without it", () => {
    expect(terminalLoginSupportOf({})).toBe("none");
    expect(terminalLoginSupportOf({ auth: { terminal: false }, _meta: { "terminal-auth": "yes" } })).toBe("none");
    expect(terminalLoginSupportOf({ auth: { terminal: true } })).toBe("terminal");
    expect(terminalLoginSupportOf({ _meta: { "terminal-auth": true } })).toBe("terminal-meta");
    expect(terminalLoginSupportOf({ auth: { terminal: true }, _meta: { "terminal-auth": true } })).toBe("terminal-meta");
  });

  it("a client that declared nothing gets no type-terminal method and no terminal-auth command; other methods and _meta unchanged", () => {
    const { _meta: _dropped, ...bare } = agentMethod;
    expect(authMethodsForClient([terminal, agentMethod, envMethod], "none", local)).toEqual([bare, envMethod]);
  });

  it("a client that declared auth.terminal gets type-terminal methods without the terminal-auth command", () => {
    const { "terminal-auth": _command, ...others } = terminal._meta;
    expect(authMethodsForClient([terminal, envMethod], "terminal", local)).toEqual([{ ...terminal, _meta: others }, envMethod]);
  });

  it("a client that declared terminal-auth is told to run berth login: the agent's label and keys kept, its env emptied", () => {
    expect(authMethodsForClient([terminal, agentMethod], "terminal-meta", local)).toEqual([
      {
        ...terminal,
        _meta: { "terminal-auth": { command: "berth", args: local("agent-login").slice(1), env: {}, label: "Agent Login" }, other: 1 },
      },
      { ...agentMethod, _meta: { "terminal-auth": { command: "berth", args: local("agent-run").slice(1), label: "L" } } },
    ]);
  });
});

describe("the agent's own terminal login on the host", () => {
  it("is the command its terminal-auth names, with the agent's environment under the method's", () => {
    expect(terminalLoginOf(launch, [terminal], "agent-login")).toEqual({
      command: "/usr/bin/node",
      args: ["/opt/agent/index.js", "--cli"],
      env: { AGENT_HOME: "/srv/agent", MODE: "acp", TERM_LOGIN: "1" },
      label: "Agent Login",
    });
  });

  it("for a type-terminal method with no such command, is the agent's launch with the method's args and env", () => {
    const { _meta: _command, ...plain } = terminal;
    expect(terminalLoginOf(launch, [plain], "agent-login")).toEqual({
      command: "/usr/bin/node",
      args: ["/opt/agent/index.js", "--cli"],
      env: { AGENT_HOME: "/srv/agent", MODE: "login" },
      label: "Log in",
    });
  });

  it("is undefined for a method that is no terminal login, or no method of the agent", () => {
    expect(terminalLoginOf(launch, [envMethod], "key")).toBeUndefined();
    expect(terminalLoginOf(launch, [terminal], "nope")).toBeUndefined();
    expect(terminalLoginOf(launch, undefined, "agent-login")).toBeUndefined();
  });

  it("shows pages and berth login a method naming a terminal-auth command as a terminal login, args only for ACP's type terminal", () => {
    expect(authMethodsOf([terminal, agentMethod, envMethod, { id: "browser", name: "Browser" }])).toEqual([
      { id: "agent-login", name: "Log in", type: "terminal", args: ["--cli"] },
      // Berth runs the command it names on the host: an authenticate would not log it in.
      { id: "agent-run", name: "Agent login", type: "terminal" },
      { id: "key", name: "Key", type: "env_var", vars: ["KEY"] },
      { id: "browser", name: "Browser", type: "agent" },
    ]);
  });
});
