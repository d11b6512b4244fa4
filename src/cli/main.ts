#!/usr/bin/env node
// `berth`: each module in ./commands/ adds one subcommand. They are imported here by name (knip reports a module left
// out) rather than found in the directory: the build bundles this file with what it imports (scripts/bundle.mjs).
import { Command, CommanderError } from "commander";
import { berthVersion } from "../version.js";
import * as agents from "./commands/agents.js";
import * as answer from "./commands/answer.js";
import * as changes from "./commands/changes.js";
import * as comment from "./commands/comment.js";
import * as comments from "./commands/comments.js";
import * as connect from "./commands/connect.js";
import * as login from "./commands/login.js";
import * as questions from "./commands/questions.js";
import * as serve from "./commands/serve.js";
import * as service from "./commands/service.js";
import * as sessions from "./commands/sessions.js";
import * as status from "./commands/status.js";
import * as token from "./commands/token.js";
import * as worktrees from "./commands/worktrees.js";
import { USAGE_EXIT_CODE } from "./exit-codes.js";

/** What each module under `src/cli/commands/` exports. */
interface CommandModule {
  register(program: Command): void;
}

const commands: readonly CommandModule[] = [
  agents,
  answer,
  changes,
  comment,
  comments,
  connect,
  login,
  questions,
  serve,
  service,
  sessions,
  status,
  token,
  worktrees,
];

function buildProgram(): Command {
  const program = new Command("berth")
    .description("Berth: a host for ACP coding agents, with lifecycle done right.")
    .version(berthVersion)
    .showHelpAfterError()
    .exitOverride();
  for (const command of commands) command.register(program);
  return program;
}

/**
 * `berth` alone, or with only serve's flags, is `berth serve` (what `npx berth-acp` runs); a word that names no command
 * stays an unknown command, not an argument of serve's.
 */
function withDefaultCommand(argv: readonly string[]): string[] {
  const [node, script, first, ...rest] = argv;
  const startsWithFlag = first?.startsWith("-") === true && !["-h", "--help", "-V", "--version"].includes(first);
  return first === undefined || startsWithFlag ? [node!, script!, "serve", ...(first === undefined ? [] : [first]), ...rest] : [...argv];
}

try {
  const program = buildProgram();
  await program.parseAsync(withDefaultCommand(process.argv));
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  // Help and version exit 0; usage mistakes (commander already printed them) exit 2.
  process.exitCode = error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
}
