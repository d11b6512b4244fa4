import { berthCommand } from "../../config/invocation.js";
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CommandFailedError } from "../exit-codes.js";
import { LAUNCHD_LABEL, launchdPlist } from "./launchd-plist.js";
import { runTool, toolComplaint } from "./run-tool.js";
import type { ServiceManager } from "./service-manager.js";

/** launchd, with the agent in `~/Library/LaunchAgents/` and its output in `~/Library/Logs/berth/`, in the login session's domain. */
export function launchdAgentManager(): ServiceManager {
  const file = join(homedir(), "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
  const logDir = join(homedir(), "Library", "Logs", "berth");
  const domain = `gui/${process.getuid?.() ?? 0}`;
  const service = `${domain}/${LAUNCHD_LABEL}`;
  const launchctl = (...args: string[]) => {
    const run = runTool("launchctl", args);
    if (run.state === "missing") throw new CommandFailedError("launchctl was not found: this is not macOS");
    return run;
  };
  const step = (...args: string[]) => {
    const run = launchctl(...args);
    if (run.code !== 0) throw new CommandFailedError(`launchctl ${args.join(" ")} failed: ${toolComplaint(run)}`);
  };
  const loaded = () => launchctl("print", service).code === 0;
  return {
    kind: "launchd agent",
    file,
    render: (definition) => launchdPlist(definition, logDir),
    reachable() {
      const run = runTool("launchctl", ["print", domain]);
      if (run.state === "missing") return "launchctl was not found: this is not macOS";
      if (run.code === 0) return true;
      return `launchd has no ${domain} domain here (${toolComplaint(run)}): log in to the Mac's desktop as this user, or use \`${berthCommand()} service install --print\``;
    },
    start(changed) {
      mkdirSync(logDir, { recursive: true, mode: 0o700 });
      const running = loaded();
      if (running && !changed) return;
      // launchd reads a plist once, when it is bootstrapped: a different one replaces the loaded service.
      if (running) step("bootout", service);
      step("bootstrap", domain, file);
    },
    stop(removeFile) {
      if (loaded()) step("bootout", service);
      removeFile();
    },
    status() {
      const run = launchctl("print", service);
      if (run.code !== 0) return ["loaded: no"];
      const facts = run.stdout.split("\n").filter((line) => /^\s*(state|pid|last exit code) = /.test(line));
      return ["loaded: yes", ...facts.map((line) => line.trim())];
    },
    hints: [`Its log: tail -f ${join(logDir, "berth.log")}`],
  };
}
