import { statSync } from "node:fs";
import type { Config } from "./config-schema.js";
import { hasPassword, isPostgresUrl } from "./store-url.js";

/** A configuration file that holds secrets and that other local users can read. */
export interface ConfigExposure {
  readonly path: string;
  /** Its mode, octal (`644`). */
  readonly mode: string;
  /** The settings holding secrets, named (never their values). */
  readonly secrets: readonly string[];
}

/**
 * Whether the file at `path`, read as `config`, holds a secret (the cluster secret, a store URL's password,
 * webhook headers) and is group- or world-readable. Berth warns rather than refuses: the file may be readable
 * on purpose (a group of operators), and refusing would stop a running fleet at its next restart.
 */
export function configExposure(path: string, config: Config): ConfigExposure | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o044) === 0) return undefined;
  const secrets = [
    ...(config.fleet.secret !== undefined ? ["fleet.secret"] : []),
    ...(isPostgresUrl(config.store) && hasPassword(config.store) ? ["store (its password)"] : []),
    ...(Object.keys(config.notify.webhook?.headers ?? {}).length > 0 ? ["notify.webhook.headers"] : []),
  ];
  return secrets.length === 0 ? undefined : { path, mode: mode.toString(8), secrets };
}
