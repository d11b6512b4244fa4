import { homedir } from "node:os";
import { resolve } from "node:path";
import { defaultDataDir, expandHome } from "../config/paths.js";
import { UsageError } from "./exit-codes.js";

/**
 * The data directory a command uses: `--data-dir` (relative to the working directory), else the configuration's
 * `dataDir` (absolute, or under the home: `~/...`), else `$XDG_DATA_HOME/berth`. An empty `--data-dir` (an unset
 * shell variable) is refused: it would be the working directory.
 */
export function dataDirOf(
  flag: string | undefined,
  configured: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd = process.cwd(),
): string {
  if (flag !== undefined) {
    if (flag.trim() === "") throw new UsageError("--data-dir: expected a directory, got an empty path (an unset variable?)");
    return resolve(cwd, flag);
  }
  if (configured === undefined) return defaultDataDir(env);
  return expandHome(configured, homedir());
}
