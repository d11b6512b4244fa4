import type { Command } from "commander";
import type { ChangeSet, ChangedFileView } from "../../host/views.js";
import { formatTable } from "../format-table.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

type ChangesFlags = HostFlags & { file?: string; json?: boolean };

/** One row a file, then the totals; a rename shows where it came from. */
export function changeRows(changes: ChangeSet): string {
  const rows = changes.files.map((file) => [
    file.status,
    file.oldPath ? `${file.oldPath} → ${file.path}` : file.path,
    file.binary ? "binary" : `+${file.added}`,
    file.binary ? "" : `-${file.removed}`,
  ]);
  const { files, added, removed } = changes.totals;
  const total = `${files} file${files === 1 ? "" : "s"} changed, +${added} -${removed} against ${changes.base.slice(0, 12)}`;
  return files === 0 ? `no changes against ${changes.base.slice(0, 12)}` : `${formatTable(["STATUS", "PATH", "ADDED", "REMOVED"], rows)}\n${total}`;
}

/** The patch as git prints it, and a line saying what was cut. */
function filePatch(file: ChangedFileView): string {
  const cut =
    file.cut?.patchBytes === undefined ? "" : `\n[cut: the patch is ${file.cut.patchBytes} bytes; the first ${file.cut.limitBytes} are shown]\n`;
  return `${file.patch}${cut}`;
}

export function register(program: Command): void {
  withHostFlags(
    program
      .command("changes")
      .description("what a session changed in its git directory (against HEAD): a table of files, or one file's patch")
      .argument("<session>", "the session id, from `berth sessions`"),
  )
    .option("--file <path>", "one changed file's unified patch (its path relative to the repository)")
    .option("--json", "print JSON (with --file: both texts and the patch)")
    .action((session: string, flags: ChangesFlags) =>
      runClientCommand("changes", async () => {
        const base = `/api/sessions/${encodeURIComponent(session)}/changes`;
        if (flags.file !== undefined) {
          const file = await callHost<ChangedFileView>(flags, `${base}/file?path=${encodeURIComponent(flags.file)}`);
          process.stdout.write(flags.json ? `${JSON.stringify(file, null, 2)}\n` : filePatch(file));
          return;
        }
        const changes = await callHost<ChangeSet>(flags, base);
        process.stdout.write(`${flags.json ? JSON.stringify(changes, null, 2) : changeRows(changes)}\n`);
      }),
    );
}
