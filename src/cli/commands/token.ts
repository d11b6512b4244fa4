import type { Command } from "commander";
import { berthCommand } from "../../config/invocation.js";
import { dataPaths, ensureDataDir } from "../../config/paths.js";
import { newToken, writeTokenFile } from "../../server/access-token.js";
import { loadToken } from "../../server/auth.js";
import { DeviceLogins } from "../../server/device-logins.js";
import { runningHost } from "../../server/host-file.js";
import { acquireHostLock, HostLockBusyError } from "../../server/host-lock.js";
import { callHost, HostClientError, localSetup, runClientCommand } from "../host-client.js";
import { reachableUrls } from "../../server/lan-addresses.js";
import { terminalQr } from "../startup-text.js";

interface TokenFlags {
  readonly dataDir?: string;
  readonly config?: string;
  readonly link?: boolean;
  readonly qr?: boolean;
}

/**
 * `berth token`: the access token of a data directory, printed only when asked (`berth serve`
 * prints it once, when it makes it). `--link`: the running host's dashboard link with the token.
 */
export function register(program: Command): void {
  const token = program
    .command("token")
    .description("print the access token of the data directory (made if there is none yet), or with --link the running host's dashboard link")
    .option("--link", "print the dashboard link of the running host, with the token")
    .option("--qr", "with --link: also print it as a QR code, to open it on a phone")
    .option("--data-dir <dir>", "data directory (default: from the config, else ~/.local/share/berth)")
    .option("--config <file>", "configuration file, for its dataDir")
    .action((flags: TokenFlags) =>
      runClientCommand("token", async () => {
        const paths = dataPaths(localSetup(flags).dataDir);
        if (flags.link) {
          const host = runningHost(paths.hostFile);
          if (!host)
            throw new HostClientError(
              `no Berth host is running on ${paths.dataDir} (no live ${paths.hostFile}); start one with \`${berthCommand()} serve\``,
            );
          printLink(host.url, loadToken(paths.token).token, flags.qr === true);
          return;
        }
        ensureDataDir(paths.dataDir);
        const { token: value, created } = loadToken(paths.token);
        if (created) process.stderr.write(`berth token: made a new access token in ${paths.token}\n`);
        process.stdout.write(`${value}\n`);
      }),
    );
  token
    .command("rotate")
    .description("replace the access token: the old one, every remembered device and every open connection are refused from now on")
    .option("--data-dir <dir>", "data directory (default: from the config, else ~/.local/share/berth)")
    .option("--config <file>", "configuration file, for its dataDir")
    .action((flags: Omit<TokenFlags, "link">) =>
      runClientCommand("token rotate", async () => {
        const paths = dataPaths(localSetup({ ...token.opts<TokenFlags>(), ...flags }).dataDir);
        const host = runningHost(paths.hostFile);
        if (host) {
          // The running host rotates: it also forgets remembered devices and closes what the old token opened.
          const { devicesForgotten } = await callHost<{ devicesForgotten: number }>({ dataDir: paths.dataDir }, "/api/token/rotate", {
            method: "POST",
            body: {},
          });
          process.stderr.write(
            `berth token rotate: the old token and ${devicesForgotten} remembered ${devicesForgotten === 1 ? "device" : "devices"} are refused now; the new dashboard link:\n`,
          );
          printLink(host.url, loadToken(paths.token).token, false);
          return;
        }
        rotateOffline(paths);
      }),
    );
}

/** The link a person opens (a LAN address for a host on `0.0.0.0`), and its QR code if asked. */
function printLink(hostUrl: string, token: string, qr: boolean): void {
  const link = `${reachableUrls(hostUrl)[0]}/?token=${token}`;
  process.stdout.write(`${link}\n`);
  if (qr) process.stdout.write(terminalQr(link));
}

/** No host runs: the token file is replaced under the host lock, so no host starts with the old one meanwhile. */
function rotateOffline(paths: ReturnType<typeof dataPaths>): void {
  ensureDataDir(paths.dataDir);
  let lock: ReturnType<typeof acquireHostLock>;
  try {
    lock = acquireHostLock(paths.lock);
  } catch (error) {
    if (error instanceof HostLockBusyError) throw new HostClientError(`a Berth host is starting on ${paths.dataDir}; run this again once it runs`);
    throw error;
  }
  try {
    const next = newToken();
    writeTokenFile(paths.token, next);
    const devices = new DeviceLogins(paths.logins).revokeAll();
    process.stderr.write(
      `berth token rotate: made a new access token in ${paths.token}; the old one and ${devices} remembered ${devices === 1 ? "device" : "devices"} are refused from the next start\n`,
    );
    process.stdout.write(`${next}\n`);
  } finally {
    lock.release();
  }
}
