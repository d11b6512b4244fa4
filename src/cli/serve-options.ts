import { resolve } from "node:path";
import type { Command } from "commander";
import { ALLOWED_HOST_FORM, parseAllowedHost, type AllowedHost } from "../config/allowed-hosts.js";
import { BLOCKED_PORT, isBlockedPort, MIN_SECRET_LENGTH, type Config } from "../config/config-schema.js";
import { DURATION_FORM, parseDuration } from "../config/durations.js";
import { loadConfigFile } from "../config/load-config.js";
import { hasPassword, isStoreSetting, redactUrl, STORE_FORM } from "../config/store-url.js";
import { configExposure, type ConfigExposure } from "../config/config-exposure.js";
import { defaultConfigPath, defaultDataDir } from "../config/paths.js";
import { dataDirOf } from "./data-dir.js";
import { UsageError } from "./exit-codes.js";

/** `berth serve` flags as commander hands them over (all text). */
export interface ServeFlags {
  readonly host?: string;
  readonly port?: string;
  readonly config?: string;
  readonly dataDir?: string;
  readonly releaseGrace?: string;
  readonly idleTtl?: string;
  readonly maxActiveHold?: string;
  readonly sweepInterval?: string;
  /** Print the dashboard link with its token even though the token is not new. */
  readonly printToken?: boolean;
  /** `--store`: config `store` ("sqlite" or a postgres:// URL). */
  readonly store?: string;
  /** `--host-id`: config `fleet.hostId`. */
  readonly hostId?: string;
  /** `--allowed-host`, repeatable: added to config `server.allowedHosts`. */
  readonly allowedHost?: readonly string[];
}

export interface ServeSettings {
  readonly config: Config;
  readonly configPath: string;
  /** The configuration file holds secrets and other users can read it; undefined if not. */
  readonly exposure: ConfigExposure | undefined;
  readonly dataDir: string;
  readonly listenHost: string;
  readonly port: number;
  /** `BERTH_LOG_LEVEL`, else `info`. */
  readonly logLevel: LogLevel;
}

/** The log's levels (pino's), as `BERTH_LOG_LEVEL` names them. */
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];
const LOG_LEVEL_ENV = "BERTH_LOG_LEVEL";

/** An empty value (a blank `Environment=` line) is no value. */
function logLevelOf(env: Env): LogLevel {
  const level = env[LOG_LEVEL_ENV]?.trim() || "info";
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new UsageError(`${LOG_LEVEL_ENV}: expected one of ${LOG_LEVELS.join(", ")}, got "${level}"`);
  return level as LogLevel;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The cluster secret from the environment (config `fleet.secret`); never a flag, which every local user could read in `ps`. */
export const CLUSTER_SECRET_ENV = "BERTH_CLUSTER_SECRET";

const durationFlags = [
  ["releaseGrace", "--release-grace"],
  ["idleTtl", "--idle-ttl"],
  ["maxActiveHold", "--max-active-hold"],
  ["sweepInterval", "--sweep-interval"],
] as const;

/**
 * The flags that say how a host runs, as `berth serve` and `berth service install` both take them (declared once).
 * `path` flags are files or directories, resolved against the working directory; `repeatable` ones collect a list.
 */
const hostFlags: readonly {
  readonly key: keyof ServeFlags;
  readonly flags: string;
  readonly description: () => string;
  readonly kind: "text" | "path" | "repeatable";
}[] = [
  { key: "host", flags: "--host <address>", description: () => "address to listen on (config server.host, default 127.0.0.1)", kind: "text" },
  {
    key: "port",
    flags: "--port <port>",
    description: () => "port to listen on, 0 for any free port (config server.port, default 7420)",
    kind: "text",
  },
  {
    key: "config",
    flags: "--config <file>",
    description: () => `configuration file (default ${defaultConfigPath()}; a missing default file means all defaults)`,
    kind: "path",
  },
  { key: "dataDir", flags: "--data-dir <dir>", description: () => `data directory (config dataDir, default ${defaultDataDir()})`, kind: "path" },
  {
    key: "releaseGrace",
    flags: "--release-grace <duration>",
    description: () => "how long an unheld agent child is kept warm (default 15s)",
    kind: "text",
  },
  { key: "idleTtl", flags: "--idle-ttl <duration>", description: () => "how long an idle location is kept (default 60m)", kind: "text" },
  {
    key: "maxActiveHold",
    flags: "--max-active-hold <duration>",
    description: () => "how long a silent running turn may keep its location (default 24h)",
    kind: "text",
  },
  { key: "sweepInterval", flags: "--sweep-interval <duration>", description: () => "how often locations are swept (default 1m)", kind: "text" },
  {
    key: "store",
    flags: "--store <url>",
    description: () => 'where sessions are kept: "sqlite" (the data directory, the default) or a postgres:// URL shared by a fleet (config store)',
    kind: "text",
  },
  {
    key: "hostId",
    flags: "--host-id <id>",
    description: () => "this host's id in a fleet on PostgreSQL (config fleet.hostId, default the machine's host name)",
    kind: "text",
  },
  {
    key: "allowedHost",
    flags: "--allowed-host <name>",
    description: () => "another host name Berth answers to, behind a reverse proxy (repeatable; adds to config server.allowedHosts)",
    kind: "repeatable",
  },
];

/** Adds the host's flags ({@link hostFlags}) to a command. */
export function addServeOptions(command: Command): Command {
  for (const { flags, description, kind } of hostFlags) {
    if (kind === "repeatable") command.option(flags, description(), (value: string, values: string[] = []) => [...values, value]);
    else command.option(flags, description());
  }
  return command;
}

/** The host's flags given, as `berth serve` arguments again, with paths made absolute (a service runs elsewhere). */
export function serveArguments(flags: ServeFlags, cwd = process.cwd()): string[] {
  const args: string[] = [];
  for (const { key, flags: declared, kind } of hostFlags) {
    const value = flags[key];
    if (value === undefined || typeof value === "boolean") continue;
    const flag = declared.split(" ")[0]!;
    if (kind === "repeatable") for (const each of value as readonly string[]) args.push(flag, each);
    else args.push(flag, kind === "path" ? resolve(cwd, value as string) : (value as string));
  }
  return args;
}

/**
 * The configuration file (the default one may be missing; one named by `--config` may not),
 * with the flags laid over it. Throws ConfigError or UsageError naming what is wrong.
 */
export function resolveServeSettings(flags: ServeFlags, env: Env = process.env, cwd = process.cwd()): ServeSettings {
  const configPath = flags.config === undefined ? defaultConfigPath(env) : resolve(cwd, flags.config);
  let config = loadConfigFile(configPath, { required: flags.config !== undefined });
  const exposure = configExposure(configPath, config);
  for (const [key, flag] of durationFlags) {
    const text = flags[key];
    if (text === undefined) continue;
    const ms = parseDuration(text);
    if (ms === undefined) throw new UsageError(`${flag}: ${DURATION_FORM}, got "${text}"`);
    if (key === "sweepInterval" && ms === 0) throw new UsageError(`${flag}: must be more than 0`);
    config = { ...config, [key]: ms };
  }
  if (flags.allowedHost !== undefined && flags.allowedHost.length > 0) {
    const added = flags.allowedHost.map(allowedHostFlag);
    config = { ...config, server: { ...config.server, allowedHosts: [...config.server.allowedHosts, ...added] } };
  }
  if (flags.store !== undefined) {
    if (!isStoreSetting(flags.store)) throw new UsageError(`--store: ${STORE_FORM}, got "${redactUrl(flags.store)}"`);
    if (hasPassword(flags.store))
      throw new UsageError(
        `--store: the URL holds a password, which every local user can read in the command line (ps): leave it out of the URL and give it in PGPASSWORD or in a password file (~/.pgpass, or the file PGPASSFILE names, mode 0600), or put the URL in the 0600 configuration file; got "${redactUrl(flags.store)}"`,
      );
    config = { ...config, store: flags.store };
  }
  if (flags.hostId !== undefined) {
    if (flags.hostId.trim() === "") throw new UsageError("--host-id: expected a non-empty id");
    config = { ...config, fleet: { ...config.fleet, hostId: flags.hostId } };
  }
  const secret = env[CLUSTER_SECRET_ENV];
  if (secret !== undefined) {
    if (secret.length < MIN_SECRET_LENGTH)
      throw new UsageError(`${CLUSTER_SECRET_ENV}: expected a cluster secret of at least ${MIN_SECRET_LENGTH} characters, got ${secret.length}`);
    config = { ...config, fleet: { ...config.fleet, secret } };
  }
  const listenHost = flags.host ?? config.server.host;
  if (listenHost.trim() === "") throw new UsageError("--host: expected an address such as 127.0.0.1");
  return {
    config,
    configPath,
    exposure,
    dataDir: dataDirOf(flags.dataDir, config.dataDir, env, cwd),
    logLevel: logLevelOf(env),
    listenHost,
    port: flags.port === undefined ? config.server.port : parsePort(flags.port),
  };
}

function allowedHostFlag(text: string): AllowedHost {
  const parsed = parseAllowedHost(text);
  if (parsed === undefined) throw new UsageError(`--allowed-host: ${ALLOWED_HOST_FORM}, got "${text}"`);
  return parsed;
}

function parsePort(text: string): number {
  const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--port: expected a port number from 0 to 65535, got "${text}"`);
  if (isBlockedPort(port)) throw new UsageError(`--port ${port}: ${BLOCKED_PORT}`);
  return port;
}
