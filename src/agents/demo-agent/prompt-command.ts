import { parseDuration } from "./duration.js";

/** What a prompt asks the demo agent to do, decided by its text alone. */
export type PromptCommand =
  | { name: "echo"; text: string }
  | { name: "run"; shellCommand: string }
  | { name: "ask"; question: string }
  | { name: "elicit"; message: string }
  | { name: "sleep"; durationMs: number; spelled: string }
  | { name: "spawn-orphan" }
  | { name: "crash" }
  | { name: "flood"; count: number; bytes: number }
  | { name: "mcp-servers" }
  | { name: "read"; path: string }
  | { name: "write"; path: string; content: string }
  /** A bad or unknown command: the agent answers with `text` and ends the turn. */
  | { name: "reply"; text: string };

/** Bounds that keep one flood chunk well under the SDK's 32 MiB message limit. */
const floodLimits = { maxCount: 1_000_000, maxBytes: 1_048_576 } as const;

const usage: Record<string, string> = {
  run: "/run <shell command>",
  ask: "/ask <question>",
  elicit: "/elicit <message>",
  sleep: "/sleep <duration> (e.g. 500ms, 2s, 3m, 1h)",
  "spawn-orphan": "/spawn-orphan",
  crash: "/crash",
  flood: "/flood <count> <bytes>",
  "mcp-servers": "/mcp-servers",
  read: "/read <absolute path>",
  write: "/write <absolute path> <content>",
};

const knownCommands = Object.values(usage);

/** Text that starts with `/word` followed by a space or the end is a command. */
const commandPattern = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/;

export function parsePromptCommand(text: string): PromptCommand {
  const match = commandPattern.exec(text.trim());
  if (!match) return { name: "echo", text };
  const name = match[1] as string;
  const rest = (match[2] ?? "").trim();
  switch (name) {
    case "run":
      return rest ? { name, shellCommand: rest } : missingArgument(name);
    case "ask":
      return rest ? { name, question: rest } : missingArgument(name);
    case "elicit":
      return rest ? { name, message: rest } : missingArgument(name);
    case "sleep":
      return parseSleep(rest);
    case "read":
      return rest ? { name, path: rest } : missingArgument(name);
    case "write":
      return parseWrite(rest);
    case "flood":
      return parseFlood(rest);
    case "spawn-orphan":
    case "crash":
    case "mcp-servers":
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

function parseSleep(rest: string): PromptCommand {
  if (!rest) return missingArgument("sleep");
  try {
    return { name: "sleep", durationMs: parseDuration(rest), spelled: rest };
  } catch (error) {
    return { name: "reply", text: `/sleep: ${(error as Error).message}. Usage: ${usage.sleep}` };
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
        `and a chunk size from 1 to ${floodLimits.maxBytes} bytes. Usage: ${usage.flood}`,
    };
  }
  return { name: "flood", count, bytes };
}

function missingArgument(name: string): PromptCommand {
  return { name: "reply", text: `/${name}: missing argument. Usage: ${usage[name]}` };
}

function unexpectedArgument(name: string, rest: string): PromptCommand {
  return { name: "reply", text: `/${name}: takes no argument, got "${rest}". Usage: ${usage[name]}` };
}
