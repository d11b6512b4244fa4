import type { Command } from "commander";
import type { SessionView } from "../../host/views.js";
import { everySession } from "../../protocol/session-pages.js";
import { formatTable } from "../format-table.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

export function sessionRows(sessions: readonly SessionView[]): string {
  return formatTable(
    ["SESSION", "AGENT", "STATE", "PID", "HOLDERS", "TURN", "QUESTIONS", "DIRECTORY", "TITLE"],
    sessions.map((s) => [
      s.id,
      s.agent,
      s.state,
      s.pid === null ? "-" : String(s.pid),
      String(s.holders),
      s.turnActive ? "running" : "-",
      String(s.pendingQuestions),
      s.workspace ? `${s.cwd} [${s.workspace}]` : s.cwd,
      s.title ?? "",
    ]),
  );
}

export function register(program: Command): void {
  withHostFlags(program.command("sessions").description("list the running host's sessions"))
    .option("--json", "print JSON")
    .action((flags: HostFlags & { json?: boolean }) =>
      runClientCommand("sessions", async () => {
        const sessions = await everySession("/api/sessions", (path) => callHost<{ sessions: SessionView[]; nextCursor?: string }>(flags, path));
        process.stdout.write(`${flags.json ? JSON.stringify(sessions, null, 2) : sessionRows(sessions)}\n`);
      }),
    );
}
