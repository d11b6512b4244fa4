import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import type { SessionView, WorktreeRequest } from "../../host/views.js";
import { CommandFailedError, UsageError } from "../exit-codes.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

type NewFlags = HostFlags & { worktree?: boolean; base?: string; branch?: string; agent?: string; title?: string };

/** `berth new`'s request body: the directory made absolute here (the host may run elsewhere, so not its cwd). */
export function newSessionBody(dir: string | undefined, flags: NewFlags, cwd = process.cwd()): Record<string, unknown> {
  if (!flags.worktree && (flags.base !== undefined || flags.branch !== undefined)) throw new UsageError("--base and --branch go with --worktree");
  const worktree: WorktreeRequest = {
    ...(flags.base === undefined ? {} : { base: flags.base }),
    ...(flags.branch === undefined ? {} : { branch: flags.branch }),
  };
  return {
    cwd: resolve(cwd, dir ?? "."),
    ...(flags.agent === undefined ? {} : { agent: flags.agent }),
    ...(flags.title === undefined ? {} : { title: flags.title }),
    ...(flags.worktree ? { worktree } : {}),
  };
}

export function register(program: Command): void {
  withHostFlags(
    program
      .command("new")
      .description("create a session in DIR (default: here), in a git worktree of its own with --worktree; prints its id and worktree")
      .argument("[dir]", "the session's directory; with --worktree, a directory of the git checkout to branch from"),
  )
    .option("--worktree", "work in a new git worktree and branch of the checkout (docs/worktrees.md)")
    .option("--base <branch>", "the branch the worktree starts from and lands into (default: the checkout's current branch)")
    .option("--branch <name>", "the worktree's new branch (default: berth/<slug of the title>)")
    .option("--agent <id>", "the agent (default: the host's defaultAgent)")
    .option("--title <title>", "the session's title")
    .action((dir: string | undefined, flags: NewFlags) =>
      runClientCommand("new", async () => {
        const session = await callHost<SessionView>(flags, "/api/sessions", { method: "POST", body: newSessionBody(dir, flags) });
        const { worktree } = session;
        const where = worktree ? `worktree ${worktree.path} (branch ${worktree.branch} from ${worktree.base})` : `directory ${session.cwd}`;
        process.stdout.write(`${session.id}\n${where}\n`);
      }),
    );

  withHostFlags(
    program
      .command("land")
      .description("commit what the session's worktree holds, run the check, merge its branch into its base, remove the worktree")
      .argument("<session>", "the session's id"),
  )
    .option("-m, --message <message>", "the commit message (default: the session's title)")
    .action((sessionId: string, flags: HostFlags & { message?: string }) =>
      runClientCommand("land", async () => {
        const body = flags.message === undefined ? {} : { message: flags.message };
        const session = await callHost<SessionView>(flags, `/api/sessions/${encodeURIComponent(sessionId)}/land`, { method: "POST", body });
        const worktree = session.worktree!;
        process.stdout.write(`landed ${worktree.branch} into ${worktree.base} at ${worktree.landedCommit} in ${worktree.repository}\n`);
      }),
    );

  withHostFlags(
    program
      .command("discard")
      .description("remove the session's worktree and its branch, with everything in them (asks first unless --yes)")
      .argument("<session>", "the session's id"),
  )
    .option("--yes", "do not ask")
    .action((sessionId: string, flags: HostFlags & { yes?: boolean }) =>
      runClientCommand("discard", async () => {
        const path = `/api/sessions/${encodeURIComponent(sessionId)}`;
        if (!flags.yes) {
          const { worktree } = await callHost<SessionView>(flags, path);
          // Asked only of a worktree there is to discard: the host refuses the rest with its own words.
          if (worktree?.state === "active") await confirm(`Discard ${worktree.path} and branch ${worktree.branch}, with everything in them? [y/N] `);
        }
        const session = await callHost<SessionView>(flags, `${path}/discard`, { method: "POST" });
        process.stdout.write(`discarded ${session.worktree!.path} and branch ${session.worktree!.branch}\n`);
      }),
    );
}

async function confirm(question: string): Promise<void> {
  process.stdout.write(question);
  const lines = createInterface({ input: process.stdin, terminal: false });
  const answer = (await lines[Symbol.asyncIterator]().next()).value as string | undefined;
  lines.close();
  if (!/^y(es)?$/i.test(answer?.trim() ?? "")) throw new CommandFailedError("nothing was discarded");
}
