import type { StopReason } from "@agentclientprotocol/sdk";
import type { PromptCommand } from "../prompt-command.js";
import type { Turn } from "../turn.js";
import { ask } from "./ask.js";
import { crash } from "./crash.js";
import { echo } from "./echo.js";
import { embed } from "./embed.js";
import { elicit } from "./elicit.js";
import { extensionNotification, extensionRequest } from "./extension.js";
import { fail } from "./fail.js";
import { editFile } from "./edit.js";
import { readFile, writeFile } from "./files.js";
import { flood } from "./flood.js";
import { history, mode, whoami } from "./introspect.js";
import { mcpServers } from "./mcp-servers.js";
import { plan, think } from "./plan.js";
import { runShell } from "./run-shell.js";
import { sleep } from "./sleep.js";
import { usage } from "./usage.js";
import { spawnOrphan } from "./spawn-orphan.js";
import { straggle } from "./straggle.js";
import { title } from "./title.js";

/** Runs one parsed command as the body of a turn. */
export async function runCommand(turn: Turn, command: PromptCommand): Promise<StopReason> {
  switch (command.name) {
    case "echo":
      return echo(turn, command.text);
    case "run":
      return runShell(turn, command.shellCommand, command.keepTerminal === true);
    case "embed":
      return embed(turn, command.output);
    case "ask":
      return ask(turn, command.question);
    case "elicit":
      return elicit(turn, command.message);
    case "sleep":
      return sleep(turn, command.durationMs, command.spelled, command.ignoreCancel === true);
    case "spawn-orphan":
      return spawnOrphan(turn);
    case "straggle":
      return straggle(turn, command.delayMs, command.text);
    case "crash":
      return crash(turn);
    case "flood":
      return flood(turn, command.count, command.bytes);
    case "mcp-servers":
      return mcpServers(turn);
    case "read":
      return readFile(turn, command.path);
    case "write":
      return writeFile(turn, command.path, command.content);
    case "edit":
      return editFile(turn, command.path, command.content);
    case "plan":
      return plan(turn, command.steps);
    case "think":
      return think(turn, command.text);
    case "mode":
      return mode(turn);
    case "whoami":
      return whoami(turn);
    case "history":
      return history(turn);
    case "ext":
      return extensionRequest(turn, command.method, command.params);
    case "extnotify":
      return extensionNotification(turn, command.method, command.params);
    case "fail":
      return fail(command.code, command.message);
    case "bad-answer":
      // The turn itself does nothing: the app answers it badly.
      return "end_turn";
    case "usage":
      return usage(turn, command.used, command.size, command.cost);
    case "title":
      return title(turn, command.title);
    case "reply":
      await turn.say(command.text);
      return "end_turn";
  }
}
