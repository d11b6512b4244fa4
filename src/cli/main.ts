#!/usr/bin/env node
// `berth`: every module in ./commands/ adds one subcommand, so a new command is one new file.
import { readdirSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { berthVersion } from "../version.js";
import { USAGE_EXIT_CODE } from "./exit-codes.js";

/** What each module under `src/cli/commands/` exports. */
export interface CommandModule {
  register(program: Command): void;
}

const commandsDir = new URL("./commands/", import.meta.url);
// Run compiled (`.js`) or from source under vitest (`.ts`): load the command files of the same kind.
const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

async function buildProgram(): Promise<Command> {
  const program = new Command("berth")
    .description("Berth: a host for ACP coding agents, with lifecycle done right.")
    .version(berthVersion)
    .showHelpAfterError()
    .exitOverride();
  const files = readdirSync(commandsDir)
    .filter((name) => name.endsWith(extension) && !name.endsWith(".d.ts"))
    .sort();
  for (const file of files) {
    const module = (await import(new URL(file, commandsDir).href)) as Partial<CommandModule>;
    if (typeof module.register !== "function") throw new Error(`src/cli/commands/${file} does not export register(program)`);
    module.register(program);
  }
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
  const program = await buildProgram();
  await program.parseAsync(withDefaultCommand(process.argv));
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  // Help and version exit 0; usage mistakes (commander already printed them) exit 2.
  process.exitCode = error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
}
