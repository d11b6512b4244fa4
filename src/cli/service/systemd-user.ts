import { berthCommand } from "../../config/invocation.js";
import { homedir } from "node:os";
import { join } from "node:path";
import { CommandFailedError } from "../exit-codes.js";
import { runTool, toolComplaint } from "./run-tool.js";
import type { ServiceManager } from "./service-manager.js";
import { systemdUnit } from "./systemd-unit.js";

type Env = Readonly<Record<string, string | undefined>>;

const UNIT = "berth.service";

/** systemd's user manager (`systemctl --user`), with the unit in `$XDG_CONFIG_HOME/systemd/user/`, where it looks. */
export function systemdUserManager(env: Env = process.env): ServiceManager {
  const file = join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "systemd", "user", UNIT);
  const systemctl = (...args: string[]) => {
    const run = runTool("systemctl", ["--user", ...args]);
    if (run.state === "missing") throw new CommandFailedError("systemctl was not found: this machine does not run systemd");
    return run;
  };
  /** Runs a step that must succeed; its failure names the step and what systemctl said. */
  const step = (...args: string[]) => {
    const run = systemctl(...args);
    if (run.code !== 0) throw new CommandFailedError(`systemctl --user ${args.join(" ")} failed: ${toolComplaint(run)}`);
  };
  return {
    kind: "systemd user unit",
    file,
    render: systemdUnit,
    reachable() {
      const run = runTool("systemctl", ["--user", "show", "--property=Version"]);
      if (run.state === "missing")
        return `systemctl was not found: this machine does not run systemd; run \`${berthCommand()} serve\` under your own supervisor`;
      if (run.code === 0) return true;
      return (
        `no systemd user manager is reachable (systemctl --user: ${toolComplaint(run)}). ` +
        "A container, or a shell without a login session of this user (su, sudo), has none: log in as the user, or run " +
        "`loginctl enable-linger $USER` and set XDG_RUNTIME_DIR=/run/user/$(id -u); " +
        `\`${berthCommand()} service install --print\` shows the unit without installing it`
      );
    },
    start(changed) {
      step("daemon-reload");
      // enable --now leaves a running service as it is: one running an earlier unit is restarted to take the new one.
      if (changed) step("try-restart", UNIT);
      step("enable", "--now", UNIT);
    },
    stop(removeFile) {
      step("disable", "--now", UNIT);
      removeFile();
      step("daemon-reload");
    },
    status() {
      const word = (...args: string[]) => {
        const run = systemctl(...args, UNIT);
        return run.stdout.trim() || toolComplaint(run);
      };
      const lines = [`enabled: ${word("is-enabled")}`, `active:  ${word("is-active")}`];
      // Its exit status says whether the unit runs (3: not running), which the lines above already say.
      const gist = systemctl("status", "--no-pager", "--lines=5", UNIT).stdout.trimEnd();
      if (gist !== "") lines.push("", gist);
      return lines;
    },
    hints: [
      "To keep it running without a login session (and start it at boot): loginctl enable-linger $USER",
      "Its log: journalctl --user -u berth -f",
    ],
  };
}
