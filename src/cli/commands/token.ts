import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { loadConfigFile } from "../../config/load-config.js";
import { dataPaths, defaultConfigPath, defaultDataDir } from "../../config/paths.js";
import { loadToken } from "../../server/auth.js";
import { runningHost } from "../../server/host-file.js";
import { HostClientError, runClientCommand } from "../host-client.js";

interface TokenFlags {
  readonly dataDir?: string;
  readonly config?: string;
  readonly link?: boolean;
}

/**
 * `berth token`: the access token of a data directory, printed only when asked (`berth serve`
 * prints it once, when it makes it). `--link`: the running host's dashboard link with the token.
 */
export function register(program: Command): void {
  program
    .command("token")
    .description("print the access token of the data directory (made if there is none yet), or with --link the running host's dashboard link")
    .option("--link", "print the dashboard link of the running host, with the token")
    .option("--data-dir <dir>", "data directory (default: from the config, else ~/.local/share/berth)")
    .option("--config <file>", "configuration file, for its dataDir")
    .action((flags: TokenFlags) =>
      runClientCommand("token", async () => {
        const configPath = flags.config === undefined ? defaultConfigPath() : resolve(flags.config);
        const dataDir = resolve(flags.dataDir ?? loadConfigFile(configPath, { required: flags.config !== undefined }).dataDir ?? defaultDataDir());
        const paths = dataPaths(dataDir);
        if (flags.link) {
          const host = runningHost(paths.hostFile);
          if (!host) throw new HostClientError(`no Berth host is running on ${dataDir} (no live ${paths.hostFile}); start one with \`berth serve\``);
          process.stdout.write(`${host.url.replace(/\/$/, "")}/?token=${loadToken(paths.token).token}\n`);
          return;
        }
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        const { token, created } = loadToken(paths.token);
        if (created) process.stderr.write(`berth token: made a new access token in ${paths.token}\n`);
        process.stdout.write(`${token}\n`);
      }),
    );
}
