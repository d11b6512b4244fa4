import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { orderlyStopDeadlineMs } from "../../config/stop-timings.js";
import { CLUSTER_SECRET_ENV, resolveServeSettings, serveArguments, type ServeFlags } from "../serve-options.js";

/** What a service manager runs for `berth service install`, whatever the platform. */
export interface ServiceDefinition {
  /** The absolute node, the real path of Berth's CLI script, `serve` and the host's flags given at install. */
  readonly programArguments: readonly string[];
  /** PATH as it was at install (agents are found on it), and the XDG directories Berth's defaults come from, if set. */
  readonly environment: Readonly<Record<string, string>>;
  /** The data directory the service will run on (its token is made at install). */
  readonly dataDir: string;
  /** How long the manager waits after SIGTERM before it kills what is left: longer than Berth's own orderly stop. */
  readonly stopTimeoutSec: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** What the manager waits beyond Berth's own deadline for an orderly stop, so that Berth, not the manager, ends it. */
const STOP_MARGIN_SEC = 10;
/** Variables the service keeps from the installing shell: PATH finds agents, the XDG ones find config and data. */
const KEPT_VARIABLES = ["PATH", "XDG_CONFIG_HOME", "XDG_DATA_HOME"] as const;

/**
 * The service for these flags. The flags and the configuration are checked as `berth serve` checks them (a bad one
 * throws UsageError or ConfigError here, not in a restart loop later), and a configured `stopTimeout` raises the stop
 * timeout. The cluster secret is left out: it never goes into a file a service manager shows.
 */
export function serviceDefinition(flags: ServeFlags, env: Env = process.env, cwd = process.cwd()): ServiceDefinition {
  const { [CLUSTER_SECRET_ENV]: _secret, ...envWithoutSecret } = env;
  const settings = resolveServeSettings(flags, envWithoutSecret, cwd);
  const environment: Record<string, string> = {};
  for (const name of KEPT_VARIABLES) {
    const value = env[name];
    if (value) environment[name] = value;
  }
  return {
    programArguments: [process.execPath, berthScript(), "serve", ...serveArguments(flags, cwd)],
    environment,
    dataDir: settings.dataDir,
    stopTimeoutSec: Math.ceil(orderlyStopDeadlineMs(settings.config.stopTimeout) / 1000) + STOP_MARGIN_SEC,
  };
}

/** The real path of the CLI script running now (dist/cli/main.js), not the symlink a package manager put on PATH. */
function berthScript(): string {
  return realpathSync(fileURLToPath(new URL("../main.js", import.meta.url)));
}
