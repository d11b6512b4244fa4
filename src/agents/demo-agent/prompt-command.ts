import type { BadAnswerKind } from "./commands/bad-answer.js";
import { parseDuration } from "./duration.js";

/** What a prompt asks the demo agent to do, decided by its text alone. */
export type PromptCommand =
  | { name: "echo"; text: string }
  /** `keepTerminal`: the final update keeps the terminal content and the terminal is not released (as some agents do). */
  | { name: "run"; shellCommand: string; keepTerminal?: true }
  /** A command's output as claude-agent-acp reports its own: an embedded terminal for a client that declared `terminal_output`. */
  | { name: "embed"; output: string }
  | { name: "ask"; question: string }
  | { name: "elicit"; message: string }
  /** `ignoreCancel`: the wait goes on after `session/cancel` (an agent that does not honour it). */
  | { name: "sleep"; durationMs: number; spelled: string; ignoreCancel?: true }
  | { name: "spawn-orphan" }
  /** A helper sharing the agent's stdout writes `text` as an agent message `delayMs` after it was sent SIGTERM. */
  | { name: "straggle"; delayMs: number; text: string }
  | { name: "crash" }
  | { name: "flood"; count: number; bytes: number }
  | { name: "mcp-servers" }
  | { name: "read"; path: string }
  | { name: "write"; path: string; content: string }
  | { name: "edit"; path: string; content: string }
  | { name: "plan"; steps: string[] }
  | { name: "think"; text: string }
  | { name: "mode" }
  | { name: "whoami" }
  | { name: "history" }
  /** `/ext` and `/extnotify`: an extension message to the client. */
  | { name: "ext" | "extnotify"; method: string; params: unknown }
  | { name: "fail"; code: number; message: string }
  /** `/bad-answer`: the answer to the prompt is a line the client must refuse (the app writes it outside the SDK). */
  | { name: "bad-answer"; kind: BadAnswerKind }
  | { name: "usage"; used: number; size: number; cost: { amount: number; currency: string } | null }
  /** `/title`: the agent names its session (`session_info_update`), as agents that title their sessions do. */
  | { name: "title"; title: string }
  /** A bad or unknown command: the agent answers with `text` and ends the turn. */
  | { name: "reply"; text: string };

/** Bounds that keep one flood chunk well under the SDK's 32 MiB message limit. */
const floodLimits = { maxCount: 1_000_000, maxBytes: 1_048_576 } as const;

/** Every command, with its argument hint and what it does (also sent as `available_commands_update`). */
export const promptCommandHelp: Record<string, { hint?: string; description: string }> = {
  run: {
    hint: "[--keep-terminal] <shell command>",
    description: "Run a shell command in a client terminal (--keep-terminal: the final update still shows the terminal, not released)",
  },
  ask: { hint: "<question>", description: "Ask the client for permission (allow/deny)" },
  elicit: { hint: "<message>", description: "Ask the client for a one-field form" },
  sleep: {
    hint: "[--ignore-cancel] <duration> (e.g. 500ms, 2s, 3m, 1h)",
    description: "Wait, honouring session/cancel (--ignore-cancel: an agent that does not, for tests of Berth stopping it)",
  },
  "spawn-orphan": { description: "Start a sleep 3600 grandchild in the agent's process group" },
  straggle: {
    hint: "<duration> <text>",
    description: "Start a helper in the agent's process group, on its stdout, that ignores SIGTERM and writes <text> that long after one",
  },
  crash: { description: "Exit abruptly (code 3) mid-turn" },
  flood: { hint: "<count> <bytes>", description: "Stream count chunks of that many bytes" },
  "mcp-servers": { description: "Report the MCP servers this session was given" },
  read: { hint: "<absolute path>", description: "Read a file through fs/read_text_file" },
  write: { hint: "<absolute path> <content>", description: "Write a file through fs/write_text_file" },
  edit: { hint: "<absolute path> <content>", description: "Replace a file's content, shown as a tool call with a diff" },
  embed: {
    hint: "<output>",
    description:
      "Report a command's output as a terminal the agent owns (_meta terminal_info/output/exit) to a client that declared _meta.terminal_output, else as text",
  },
  plan: { hint: "<step>; <step>; ...", description: "Show a plan and work through its steps" },
  think: { hint: "<text>", description: "Stream text as a thought, then answer" },
  mode: { description: "Report the session's current mode id" },
  whoami: { description: "Report the client's name and capabilities from initialize" },
  history: { description: "Report how many prompts this conversation had before this one" },
  ext: { hint: "<method> [json params]", description: "Send an extension request to the client, report its answer" },
  extnotify: { hint: "<method> [json params]", description: "Send an extension notification to the client" },
  fail: { hint: "<code> <message>", description: "Fail session/prompt with that JSON-RPC error" },
  "bad-answer": {
    hint: "too-large | not-json",
    description: "Answer session/prompt with a line over the 32 MiB message limit, or with JSON cut short that still shows the id",
  },
  usage: { hint: "<used> <size> [<cost> <currency>]", description: "Report the context window's use (and the session's cost) as usage_update" },
  title: { hint: "<title>", description: "Name the session, as session_info_update" },
};

function usageOf(name: string): string {
  const hint = promptCommandHelp[name]?.hint;
  return hint ? `/${name} ${hint}` : `/${name}`;
}

const knownCommands = Object.keys(promptCommandHelp).map(usageOf);

/** Text that starts with `/word` followed by a space or the end is a command. */
const commandPattern = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/;

export function parsePromptCommand(text: string): PromptCommand {
  const match = commandPattern.exec(text.trim());
  if (!match) return { name: "echo", text };
  const name = match[1] as string;
  const rest = (match[2] ?? "").trim();
  switch (name) {
    case "run": {
      const kept = /^--keep-terminal\s+([\s\S]+)$/.exec(rest);
      if (kept) return { name, shellCommand: kept[1]!, keepTerminal: true };
      return rest && rest !== "--keep-terminal" ? { name, shellCommand: rest } : missingArgument(name);
    }
    case "embed":
      return rest ? { name, output: rest } : missingArgument(name);
    case "ask":
      return rest ? { name, question: rest } : missingArgument(name);
    case "elicit":
      return rest ? { name, message: rest } : missingArgument(name);
    case "sleep":
      return parseSleep(rest);
    case "straggle":
      return parseStraggle(rest);
    case "read":
      return rest ? { name, path: rest } : missingArgument(name);
    case "write":
      return parseWrite(rest);
    case "edit": {
      const write = parseWrite(rest);
      return write.name === "write" ? { ...write, name: "edit" } : missingArgument(name);
    }
    case "plan": {
      const steps = rest
        .split(";")
        .map((step) => step.trim())
        .filter((step) => step !== "");
      return steps.length > 0 ? { name, steps } : missingArgument(name);
    }
    case "think":
      return rest ? { name, text: rest } : missingArgument(name);
    case "title":
      return rest ? { name, title: rest } : missingArgument(name);
    case "flood":
      return parseFlood(rest);
    case "ext":
    case "extnotify":
      return parseExtension(name, rest);
    case "fail":
      return parseFail(rest);
    case "bad-answer":
      return rest === "too-large" || rest === "not-json" ? { name, kind: rest } : badArgument(name, rest);
    case "usage":
      return parseUsage(rest);
    case "spawn-orphan":
    case "crash":
    case "mcp-servers":
    case "mode":
    case "whoami":
    case "history":
      return rest ? unexpectedArgument(name, rest) : { name };
    default:
      return {
        name: "reply",
        text: `Unknown command: /${name}. Known commands: ${knownCommands.join(", ")}.`,
      };
  }
}

function parseWrite(rest: string): PromptCommand {
  const match = /^(\S+)\s+([\s\S]+)$/.exec(rest);
  return match ? { name: "write", path: match[1]!, content: match[2]! } : missingArgument("write");
}

function parseExtension(name: "ext" | "extnotify", rest: string): PromptCommand {
  const match = /^(\S+)(?:\s+([\s\S]+))?$/.exec(rest);
  if (!match) return missingArgument(name);
  const method = match[1]!;
  if (match[2] === undefined) return { name, method, params: {} };
  try {
    return { name, method, params: JSON.parse(match[2]) };
  } catch (error) {
    return { name: "reply", text: `/${name}: params are not JSON: ${(error as Error).message}. Usage: ${usageOf(name)}` };
  }
}

function parseFail(rest: string): PromptCommand {
  const match = /^(-?\d+)\s+([\s\S]+)$/.exec(rest);
  if (!match || !Number.isSafeInteger(Number(match[1]))) {
    return { name: "reply", text: `/fail: expected an integer code and a message, got "${rest}". Usage: ${usageOf("fail")}` };
  }
  return { name: "fail", code: Number(match[1]), message: match[2]! };
}

function parseUsage(rest: string): PromptCommand {
  const match = /^(\d+)\s+(\d+)(?:\s+(\d+(?:\.\d+)?)\s+([A-Za-z]+))?$/.exec(rest);
  if (!match) return { name: "reply", text: `/usage: expected token counts and an optional cost, got "${rest}". Usage: ${usageOf("usage")}` };
  const cost = match[3] === undefined ? null : { amount: Number(match[3]), currency: match[4]! };
  return { name: "usage", used: Number(match[1]), size: Number(match[2]), cost };
}

function parseSleep(rest: string): PromptCommand {
  const ignoring = /^--ignore-cancel\s+(\S[\s\S]*)$/.exec(rest);
  const spelled = ignoring ? ignoring[1]! : rest;
  if (!spelled || spelled === "--ignore-cancel") return missingArgument("sleep");
  try {
    const durationMs = parseDuration(spelled);
    return ignoring ? { name: "sleep", durationMs, spelled, ignoreCancel: true } : { name: "sleep", durationMs, spelled };
  } catch (error) {
    return { name: "reply", text: `/sleep: ${(error as Error).message}. Usage: ${usageOf("sleep")}` };
  }
}

function parseStraggle(rest: string): PromptCommand {
  const match = /^(\S+)\s+([\s\S]+)$/.exec(rest);
  if (!match) return missingArgument("straggle");
  try {
    return { name: "straggle", delayMs: parseDuration(match[1]!), text: match[2]! };
  } catch (error) {
    return { name: "reply", text: `/straggle: ${(error as Error).message}. Usage: ${usageOf("straggle")}` };
  }
}

function parseFlood(rest: string): PromptCommand {
  const parts = rest.split(/\s+/);
  const [count, bytes] = parts.map(Number);
  const valid =
    parts.length === 2 &&
    parts.every((part) => /^\d+$/.test(part)) &&
    count !== undefined &&
    bytes !== undefined &&
    count >= 1 &&
    count <= floodLimits.maxCount &&
    bytes >= 1 &&
    bytes <= floodLimits.maxBytes;
  if (!valid) {
    return {
      name: "reply",
      text:
        `/flood: invalid arguments "${rest}": expected a count from 1 to ${floodLimits.maxCount} ` +
        `and a chunk size from 1 to ${floodLimits.maxBytes} bytes. Usage: ${usageOf("flood")}`,
    };
  }
  return { name: "flood", count, bytes };
}

function missingArgument(name: string): PromptCommand {
  return { name: "reply", text: `/${name}: missing argument. Usage: ${usageOf(name)}` };
}

function badArgument(name: string, rest: string): PromptCommand {
  return { name: "reply", text: `/${name}: unknown argument "${rest}". Usage: ${usageOf(name)}` };
}

function unexpectedArgument(name: string, rest: string): PromptCommand {
  return { name: "reply", text: `/${name}: takes no argument, got "${rest}". Usage: ${usageOf(name)}` };
}
