import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultStateDir, parseDemoAgentOptions } from "../../src/agents/demo-agent/cli-options.js";
import { ConversationStore } from "../../src/agents/demo-agent/conversation-store.js";
import { parseDuration } from "../../src/agents/demo-agent/duration.js";
import { parsePromptCommand } from "../../src/agents/demo-agent/prompt-command.js";
import { splitText } from "../../src/agents/demo-agent/turn.js";

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["2s", 2_000],
    ["3m", 180_000],
    ["1h", 3_600_000],
    [" 0s ", 0],
    ["1.5s", 1_500],
    ["3d", 259_200_000],
  ])("reads %s as %d ms", (spelled, ms) => expect(parseDuration(spelled)).toBe(ms));

  it.each(["", "2", "-1s", "2 s", "soon", "s"])("rejects %j naming it", (spelled) => {
    expect(() => parseDuration(spelled)).toThrow(`invalid duration "${spelled}"`);
  });

  it("rejects durations a timer cannot wait for", () => {
    expect(() => parseDuration("1000h")).toThrow(/longer than the maximum/);
    expect(() => parseDuration("30d")).toThrow(/longer than the maximum/);
  });
});

describe("parsePromptCommand", () => {
  it.each([
    ["hello", { name: "echo", text: "hello" }],
    ["/usr/bin is a directory", { name: "echo", text: "/usr/bin is a directory" }],
    ["/run ls -la | wc -l", { name: "run", shellCommand: "ls -la | wc -l" }],
    ["/run echo a\necho b", { name: "run", shellCommand: "echo a\necho b" }],
    ["/run --keep-terminal make test", { name: "run", shellCommand: "make test", keepTerminal: true }],
    ["/ask Deploy now?", { name: "ask", question: "Deploy now?" }],
    ["/elicit Your name", { name: "elicit", message: "Your name" }],
    ["/sleep 2s", { name: "sleep", durationMs: 2_000, spelled: "2s" }],
    ["/sleep --ignore-cancel 1h", { name: "sleep", durationMs: 3_600_000, spelled: "1h", ignoreCancel: true }],
    ["/spawn-orphan", { name: "spawn-orphan" }],
    ["/straggle 7s Last words.", { name: "straggle", delayMs: 7_000, text: "Last words." }],
    ["  /crash  ", { name: "crash" }],
    ["/flood 10 1024", { name: "flood", count: 10, bytes: 1024 }],
    ["/mcp-servers", { name: "mcp-servers" }],
    ["/mode", { name: "mode" }],
    ["/whoami", { name: "whoami" }],
    ["/history", { name: "history" }],
    ['/ext _x/y {"a":[1]}', { name: "ext", method: "_x/y", params: { a: [1] } }],
    ["/ext _x/y", { name: "ext", method: "_x/y", params: {} }],
    ["/extnotify _x/n [1,2]", { name: "extnotify", method: "_x/n", params: [1, 2] }],
    ["/fail -32042 boom now", { name: "fail", code: -32042, message: "boom now" }],
    ["/bad-answer too-large", { name: "bad-answer", kind: "too-large" }],
    ["/bad-answer not-json", { name: "bad-answer", kind: "not-json" }],
    ["/usage 1200 200000", { name: "usage", used: 1200, size: 200000, cost: null }],
    ["/usage 1200 200000 0.42 USD", { name: "usage", used: 1200, size: 200000, cost: { amount: 0.42, currency: "USD" } }],
  ])("reads %j", (text, command) => expect(parsePromptCommand(text)).toEqual(command));

  it.each([
    ["/run", "/run: missing argument. Usage: /run [--keep-terminal] <shell command>"],
    ["/run --keep-terminal", "/run: missing argument. Usage: /run [--keep-terminal] <shell command>"],
    ["/sleep --ignore-cancel", "/sleep: missing argument. Usage: /sleep [--ignore-cancel] <duration> (e.g. 500ms, 2s, 3m, 1h)"],
    ["/sleep --ignore-cancel soon", `/sleep: invalid duration "soon"`],
    ["/crash now", '/crash: takes no argument, got "now"'],
    ["/straggle 7s", "/straggle: missing argument. Usage: /straggle <duration> <text>"],
    ["/straggle soon bye", `/straggle: invalid duration "soon"`],
    ["/flood 10", '/flood: invalid arguments "10"'],
    ["/flood 1 99999999", '/flood: invalid arguments "1 99999999"'],
    ["/flood 1.5 2", '/flood: invalid arguments "1.5 2"'],
    ["/nope", "Unknown command: /nope."],
    ["/ext", "/ext: missing argument"],
    ["/ext _x/y {bad", "/ext: params are not JSON"],
    ["/fail boom", '/fail: expected an integer code and a message, got "boom"'],
    ["/fail 42", '/fail: expected an integer code and a message, got "42"'],
    ["/whoami me", '/whoami: takes no argument, got "me"'],
    ["/bad-answer", '/bad-answer: unknown argument "". Usage: /bad-answer too-large | not-json'],
    ["/bad-answer huge", '/bad-answer: unknown argument "huge"'],
    ["/history all", '/history: takes no argument, got "all"'],
    ["/usage 12", '/usage: expected token counts and an optional cost, got "12"'],
    ["/usage 1 2 0.5", '/usage: expected token counts and an optional cost, got "1 2 0.5"'],
  ])("answers %j with a clear message", (text, message) => {
    const command = parsePromptCommand(text);
    expect(command.name).toBe("reply");
    expect(command.name === "reply" && command.text).toContain(message);
  });
});

describe("splitText", () => {
  it("splits into at most the given number of non-empty pieces", () => {
    expect(splitText("abcdefgh", 3)).toEqual(["abc", "def", "gh"]);
    expect(splitText("ab", 3)).toEqual(["a", "b"]);
    expect(splitText("", 3)).toEqual([]);
  });

  it("never splits a surrogate pair", () => {
    expect(splitText("😀😀😀", 3)).toEqual(["😀", "😀", "😀"]);
  });
});

describe("parseDemoAgentOptions", () => {
  it("prefers --state-dir, then BERTH_DEMO_STATE_DIR, then the shared temp dir", () => {
    const env = { BERTH_DEMO_STATE_DIR: "/from/env" };
    expect(parseDemoAgentOptions(["--state-dir", "/from/flag"], env)).toEqual({
      stateDir: "/from/flag",
      loadSessions: true,
      announceSettings: true,
      requireAuth: false,
      busyPrompt: "refuse",
      listSessions: "serve",
      batchWrites: false,
    });
    expect(parseDemoAgentOptions(["--no-load", "--silent-settings"], env)).toEqual({
      stateDir: "/from/env",
      loadSessions: false,
      announceSettings: false,
      requireAuth: false,
      busyPrompt: "refuse",
      listSessions: "serve",
      batchWrites: false,
    });
    expect(parseDemoAgentOptions([], {}).stateDir).toBe(defaultStateDir);
  });

  it("reads --require-auth or BERTH_DEMO_REQUIRE_AUTH, and --record or BERTH_DEMO_RECORD", () => {
    expect(parseDemoAgentOptions(["--require-auth", "--record", "/tmp/wire.ndjson"], {})).toMatchObject({
      requireAuth: true,
      recordFile: "/tmp/wire.ndjson",
    });
    expect(parseDemoAgentOptions([], { BERTH_DEMO_REQUIRE_AUTH: "1", BERTH_DEMO_RECORD: "/from/env" })).toMatchObject({
      requireAuth: true,
      recordFile: "/from/env",
    });
    expect(parseDemoAgentOptions([], { BERTH_DEMO_REQUIRE_AUTH: "0" }).requireAuth).toBe(false);
    expect(parseDemoAgentOptions([], {})).not.toHaveProperty("recordFile");
    expect(() => parseDemoAgentOptions([], { BERTH_DEMO_REQUIRE_AUTH: "yes" })).toThrow(/BERTH_DEMO_REQUIRE_AUTH/);
    expect(() => parseDemoAgentOptions(["--record", ""], {})).toThrow(/must not be empty/);
  });

  it("reads --batch-writes or BERTH_DEMO_BATCH_WRITES", () => {
    expect(parseDemoAgentOptions(["--batch-writes"], {}).batchWrites).toBe(true);
    expect(parseDemoAgentOptions([], { BERTH_DEMO_BATCH_WRITES: "1" }).batchWrites).toBe(true);
    expect(parseDemoAgentOptions([], {}).batchWrites).toBe(false);
    expect(() => parseDemoAgentOptions([], { BERTH_DEMO_BATCH_WRITES: "yes" })).toThrow(/BERTH_DEMO_BATCH_WRITES/);
  });

  it("reads --busy-prompt or BERTH_DEMO_BUSY_PROMPT, refusing what it does not know", () => {
    expect(parseDemoAgentOptions(["--busy-prompt", "queue"], { BERTH_DEMO_BUSY_PROMPT: "cancel" }).busyPrompt).toBe("queue");
    expect(parseDemoAgentOptions([], { BERTH_DEMO_BUSY_PROMPT: "cancel" }).busyPrompt).toBe("cancel");
    expect(() => parseDemoAgentOptions(["--busy-prompt", "later"], {})).toThrow(
      '--busy-prompt (or BERTH_DEMO_BUSY_PROMPT) must be one of refuse, queue, queue-past-cancel, cancel, got "later"',
    );
  });

  it("reads --list-sessions or BERTH_DEMO_LIST_SESSIONS, refusing what it does not know", () => {
    expect(parseDemoAgentOptions(["--list-sessions", "hang"], { BERTH_DEMO_LIST_SESSIONS: "fail" }).listSessions).toBe("hang");
    expect(parseDemoAgentOptions([], { BERTH_DEMO_LIST_SESSIONS: "fail" }).listSessions).toBe("fail");
    expect(() => parseDemoAgentOptions(["--list-sessions", "slowly"], {})).toThrow(
      '--list-sessions (or BERTH_DEMO_LIST_SESSIONS) must be one of serve, paged, fail, hang, got "slowly"',
    );
  });

  it("rejects unknown options and stray arguments, naming them", () => {
    expect(() => parseDemoAgentOptions(["--verbose"], {})).toThrow(/--verbose/);
    expect(() => parseDemoAgentOptions(["extra"], {})).toThrow(/extra/);
    expect(() => parseDemoAgentOptions(["--state-dir", ""], {})).toThrow(/must not be empty/);
  });
});

describe("ConversationStore", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "berth-demo-store-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("round-trips a conversation and knows nothing of other sessions", () => {
    const store = new ConversationStore(dir);
    const conversation = {
      version: 1 as const,
      sessionId: "s-1",
      cwd: "/work",
      entries: [{ kind: "user_message" as const, messageId: "m", text: "hi" }],
    };
    store.save(conversation);
    expect(new ConversationStore(dir).read("s-1")).toEqual(conversation);
    expect(store.read("s-2")).toBeUndefined();
    expect(store.read("../escape")).toBeUndefined();
  });

  it("names the file and the problem when a conversation file is corrupt", () => {
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ version: 1, sessionId: "bad", entries: [] }));
    expect(() => new ConversationStore(dir).read("bad")).toThrow(/corrupt conversation file .*bad\.json.*cwd/s);
  });
});
