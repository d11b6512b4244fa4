import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Command } from "commander";
import { berthCommand, currentInvocation, tokenLinkCommand } from "../../config/invocation.js";
import { dataPaths } from "../../config/paths.js";
import { berthPackage } from "../../version.js";
import { loadToken } from "../../server/auth.js";
import { CommandFailedError, UsageError } from "../exit-codes.js";
import { runClientCommand } from "../host-client.js";
import { addServeOptions, type ServeFlags } from "../serve-options.js";
import { launchdAgentManager } from "../service/launchd-agent.js";
import { serviceDefinition } from "../service/service-definition.js";
import type { ServiceManager } from "../service/service-manager.js";
import { systemdUserManager } from "../service/systemd-user.js";

interface PlatformFlags {
  readonly platform?: string;
}

interface InstallFlags extends ServeFlags, PlatformFlags {
  readonly print?: boolean;
}

/**
 * `berth service install|uninstall|status`: `berth serve` as a service of the user's own service manager, a systemd
 * user unit on Linux or a launchd agent on macOS (docs/service.md).
 */
export function register(program: Command): void {
  const service = program
    .command("service")
    .description("run `berth serve` as a service of this user: a systemd user unit on Linux, a launchd agent on macOS");
  const platformOption = "--platform <platform>";
  const platformHelp = "linux or darwin, instead of this machine's (with install --print: see another platform's file)";
  addServeOptions(service.command("install").description("write the unit (or plist) for `berth serve` with these flags, enable and start it"))
    .option("--print", "print the unit (or plist) without writing or starting anything")
    .option(platformOption, platformHelp)
    .action((flags: InstallFlags) => runClientCommand("service install", async () => install(flags)));
  service
    .command("uninstall")
    .description("stop and disable the service, and remove its unit (or plist)")
    .option(platformOption, platformHelp)
    .action((flags: PlatformFlags) => runClientCommand("service uninstall", async () => uninstall(managerFor(flags))));
  service
    .command("status")
    .description("whether the service is installed, enabled and running, as the service manager says")
    .option(platformOption, platformHelp)
    .action((flags: PlatformFlags) => runClientCommand("service status", async () => status(managerFor(flags))));
}

function managerFor({ platform = process.platform }: PlatformFlags): ServiceManager {
  if (platform === "linux") return systemdUserManager();
  if (platform === "darwin") return launchdAgentManager();
  throw new UsageError(
    `services run on linux (systemd) and darwin (launchd) only, not on ${platform}: run \`${berthCommand()} serve\` under this system's own service manager`,
  );
}

function install(flags: InstallFlags): void {
  const manager = managerFor(flags);
  // The unit names the running script: npx's copy lives in npm's cache, which npm may clear at any time.
  if (currentInvocation().name === "cache" && !flags.print)
    throw new UsageError(
      `this Berth runs from a package manager's cache (npx, dlx), which may be cleared under a running service: install it first (npm install -g --allow-scripts=better-sqlite3 ${berthPackage.name}), then run berth service install`,
    );
  const definition = serviceDefinition(flags);
  const text = manager.render(definition);
  if (flags.print) {
    process.stdout.write(text);
    return;
  }
  // Asked before anything is written: without a manager, install leaves nothing behind.
  const reachable = manager.reachable();
  if (reachable !== true) throw new CommandFailedError(`${reachable}; nothing was written`);
  // The first start on a data directory prints the link with the token it made, which the service's log would keep.
  mkdirSync(definition.dataDir, { recursive: true, mode: 0o700 });
  loadToken(dataPaths(definition.dataDir).token);
  const previous = existsSync(manager.file) ? readFileSync(manager.file, "utf8") : undefined;
  mkdirSync(dirname(manager.file), { recursive: true });
  // 0600: flags such as a --store URL may carry a password.
  writeFileSync(manager.file, text, { mode: 0o600 });
  try {
    manager.start(previous !== undefined && previous !== text);
  } catch (error) {
    if (!(error instanceof CommandFailedError)) throw error;
    throw new CommandFailedError(`${error.message}\nThe ${manager.kind} is in ${manager.file}; \`${berthCommand()} service uninstall\` removes it`);
  }
  const what = previous === undefined ? "installed" : previous === text ? "already installed" : "updated";
  const hints = [...manager.hints, `The dashboard link: ${tokenLinkCommand(definition.dataDir)}`];
  process.stdout.write(`Berth runs as a ${manager.kind} (${what}): ${manager.file}\n${hints.map((hint) => `  ${hint}\n`).join("")}`);
}

function uninstall(manager: ServiceManager): void {
  if (!existsSync(manager.file)) {
    process.stdout.write(`Not installed: there is no ${manager.file}\n`);
    return;
  }
  const reachable = manager.reachable();
  // Removing the file under a manager that may still run it would leave a service nothing can name any more.
  if (reachable !== true) throw new CommandFailedError(`${reachable}; ${manager.file} stays, nothing was stopped`);
  manager.stop(() => rmSync(manager.file, { force: true }));
  process.stdout.write(`Stopped, disabled and removed: ${manager.file}\n`);
}

function status(manager: ServiceManager): void {
  const installed = existsSync(manager.file);
  const lines = [installed ? `Installed: ${manager.file}` : `Not installed: there is no ${manager.file}`];
  const reachable = manager.reachable();
  if (reachable !== true) lines.push(`Service manager: ${reachable}`);
  else if (installed) lines.push(...manager.status());
  process.stdout.write(`${lines.join("\n")}\n`);
}
