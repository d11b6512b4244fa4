import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { berthCommand } from "../config/invocation.js";
import { type Config, loadConfigFile } from "../config/load-config.js";
import { DataDirError, dataPaths, defaultConfigPath } from "../config/paths.js";
import { runningHost } from "../server/host-file.js";
import { dataDirOf } from "./data-dir.js";
import { CommandFailedError, FAILURE_EXIT_CODE, USAGE_EXIT_CODE, UsageError } from "./exit-codes.js";

/** Flags every command that talks to a running host takes. */
export interface HostFlags {
  readonly url?: string;
  readonly token?: string;
  readonly dataDir?: string;
  readonly config?: string;
}

export function withHostFlags(command: Command): Command {
  return command
    .option("--url <url>", "the host's base URL (default: the host running on the data directory)")
    .option("--token <token>", "the access token (default: <data-dir>/token)")
    .option("--data-dir <dir>", "data directory of the running host (default: from the config, else ~/.local/share/berth)")
    .option("--config <file>", "configuration file, for its dataDir");
}

/** A failure to reach or use the host, reported on stderr with exit code 1. */
export class HostClientError extends CommandFailedError {
  override readonly name = "HostClientError";
}

/** The configuration (`--config`, else the default file) and the data directory (`--data-dir`, else the configuration's, else the default). */
export function localSetup(flags: HostFlags, env = process.env): { config: Config; dataDir: string } {
  const configPath = flags.config === undefined ? defaultConfigPath(env) : resolve(flags.config);
  const config = loadConfigFile(configPath, { required: flags.config !== undefined });
  return { config, dataDir: dataDirOf(flags.dataDir, config.dataDir, env) };
}

/** The running host's URL: `--url`, else the live `host.json` in the data directory; undefined when none runs. */
export function hostUrl(flags: HostFlags, dataDir: string): string | undefined {
  return flags.url ?? runningHost(dataPaths(dataDir).hostFile)?.url;
}

/** Finds the host: `--url`/`--token`, else the `host.json` and `token` files in the data directory. */
export function locateHost(flags: HostFlags, env = process.env): { url: string; token: string } {
  const { dataDir } = localSetup(flags, env);
  const paths = dataPaths(dataDir);
  const url = hostUrl(flags, dataDir);
  if (!url)
    throw new HostClientError(
      `no Berth host is running on ${dataDir} (no live ${paths.hostFile}); start one with \`${berthCommand()} serve\` or pass --url`,
    );
  let token = flags.token;
  if (token === undefined) {
    try {
      token = readFileSync(paths.token, "utf8").trim();
    } catch {
      throw new HostClientError(`cannot read the access token from ${paths.token}; pass --token`);
    }
  }
  // Never echoed: a mistyped token is still close to the real one.
  if (!/^[\x21-\x7e]+$/.test(token)) {
    const what = "expected an access token: printable characters, no spaces or line breaks";
    throw flags.token !== undefined ? new UsageError(`--token: ${what}`) : new HostClientError(`the token file ${paths.token}: ${what}`);
  }
  return { url: url.replace(/\/$/, ""), token };
}

/** Calls the host's REST API; errors name the route and what the host said. */
export async function callHost<T>(flags: HostFlags, path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const { url, token } = locateHost(flags);
  let response: Response;
  try {
    response = await fetch(`${url}${path}`, {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${token}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch (error) {
    throw new HostClientError(
      `cannot reach the Berth host at ${url}: ${error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)}`,
    );
  }
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => ({}))) as { message?: string; error?: string; output?: unknown };
  if (response.status === 401) throw new HostClientError(`the host at ${url} refused the token`);
  if (!response.ok) {
    const message = body.message ?? `${init.method ?? "GET"} ${path} failed with HTTP ${response.status}`;
    // What a failed setup or check printed, after the reason.
    throw new HostClientError(typeof body.output === "string" && body.output !== "" ? `${message}\n${body.output.trimEnd()}` : message);
  }
  return body as T;
}

/** A file this user may not read or write (another user's data directory), said in one line; undefined for other errors. */
function permissionDenied(error: unknown): string | undefined {
  const { code, path } = error as NodeJS.ErrnoException;
  if ((code !== "EACCES" && code !== "EPERM") || path === undefined) return undefined;
  return `permission denied on ${path}: this user may not use it (another user's data directory?); run berth as its owner, or pass --data-dir`;
}

/** Runs a command: prints its failure on stderr with exit code 2 (usage, config) or 1 (the host, a service manager). */
export async function runClientCommand(name: string, action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    const usage = error instanceof UsageError || (error instanceof Error && error.name === "ConfigError");
    const denied = permissionDenied(error);
    if (!usage && !denied && !(error instanceof CommandFailedError || error instanceof DataDirError)) throw error;
    process.stderr.write(`berth ${name}: ${denied ?? (error as Error).message}\n`);
    process.exitCode = usage ? USAGE_EXIT_CODE : FAILURE_EXIT_CODE;
  }
}
