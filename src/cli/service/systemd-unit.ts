import type { ServiceDefinition } from "./service-definition.js";

/** A word a unit file takes as it is; anything else is double-quoted. */
const PLAIN_WORD = /^[\w/.:@+=,-]+$/;

/**
 * One item of a unit file's setting, as systemd.syntax(7) unquotes it: bare when plain, else in double quotes with C
 * escapes. `%` starts a specifier in every setting (`%%` is one `%`); in `Exec` lines `$` starts a variable (`$$`).
 */
function systemdWord(text: string, where: "exec" | "assignment"): string {
  let escaped = text.replaceAll("%", "%%");
  if (where === "exec") escaped = escaped.replaceAll("$", () => "$$");
  if (PLAIN_WORD.test(escaped)) return escaped;
  return `"${[...escaped].map(cEscape).join("")}"`;
}

const NAMED_ESCAPES: Readonly<Record<string, string>> = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r" };

/** A character inside double quotes: backslash and quote escaped, control characters as C escapes. */
function cEscape(char: string): string {
  const code = char.codePointAt(0)!;
  if (NAMED_ESCAPES[char] !== undefined) return NAMED_ESCAPES[char];
  return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : char;
}

/** The systemd user unit `berth service install` writes (docs/service.md explains each line). */
export function systemdUnit(service: ServiceDefinition): string {
  const environment = Object.entries(service.environment).map(([name, value]) => `Environment=${systemdWord(`${name}=${value}`, "assignment")}`);
  return [
    "# Written by `berth service install`; `berth service uninstall` removes it (docs/service.md).",
    "[Unit]",
    "Description=Berth, a host for ACP coding agents",
    "",
    "[Service]",
    // exec: the start fails when node cannot be run, instead of succeeding and failing later.
    "Type=exec",
    `ExecStart=${service.programArguments.map((word) => systemdWord(word, "exec")).join(" ")}`,
    ...environment,
    "Restart=on-failure",
    "RestartSec=5",
    // Exit status 2 is a bad flag or configuration: starting again cannot mend it.
    "RestartPreventExitStatus=2",
    // SIGTERM to Berth alone, which stops its agents' process groups in order; SIGKILL to whatever is left after the timeout.
    "KillMode=mixed",
    `TimeoutStopSec=${service.stopTimeoutSec}`,
    // Berth's cgroups of its own under the unit's, to find every descendant of its agents.
    "Delegate=yes",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}
