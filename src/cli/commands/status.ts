import type { Command } from "commander";
import type { LocationView, SandboxAvailability, SessionView } from "../../host/views.js";
import { everySession } from "../../protocol/session-pages.js";
import { formatTable, relativeTime } from "../format-table.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";
import { sessionRows } from "./sessions.js";

function locationRows(locations: readonly LocationView[], now: number): string {
  return formatTable(
    ["LOCATION", "STATE", "KEPT BY", "SESSIONS", "ACTIVE", "SERVICES", "IDLE DEADLINE", "CAP"],
    locations.map((l) => [
      l.workspace ? `${l.directory} [${l.workspace}]` : l.directory,
      l.state,
      l.keptBy,
      String(l.sessions.length),
      String(l.activeSessions.length),
      l.services.map((s) => `${s.name}:${s.state}`).join(",") || "-",
      relativeTime(l.expiresAt, now),
      relativeTime(l.capAt, now),
    ]),
  );
}

/** One line: whether sessions may ask for a sandbox here, else why not and the fix. */
function sandboxLine(sandbox: SandboxAvailability): string {
  return sandbox.state === "available" ? `Sandboxes: available (${sandbox.bwrap})` : `Sandboxes: unavailable: ${sandbox.reason}; ${sandbox.fix}`;
}

export function register(program: Command): void {
  withHostFlags(program.command("status").description("show the running host: locations, sessions, holders, deadlines"))
    .option("--json", "print JSON")
    .action((flags: HostFlags & { json?: boolean }) =>
      runClientCommand("status", async () => {
        const [{ locations }, sessions, sandbox] = await Promise.all([
          callHost<{ locations: LocationView[] }>(flags, "/api/locations"),
          everySession("/api/sessions", (path) => callHost<{ sessions: SessionView[]; nextCursor?: string }>(flags, path)),
          callHost<SandboxAvailability>(flags, "/api/sandbox"),
        ]);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ locations, sessions, sandbox }, null, 2)}\n`);
          return;
        }
        const now = Date.now();
        process.stdout.write(
          `Locations (${locations.length} cached)\n${locationRows(locations, now)}\n\nSessions (${sessions.length})\n${sessionRows(sessions)}\n\n${sandboxLine(sandbox)}\n`,
        );
      }),
    );
}
