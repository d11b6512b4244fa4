import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dataPaths } from "../config/paths.js";
import { z } from "zod";

const installedAgent = z.strictObject({
  version: z.string(),
  distribution: z.enum(["npx", "binary", "uvx"]),
  /** The version's own directory, `<dataDir>/agents/<id>/<version>`. */
  dir: z.string(),
  command: z.string(),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  /** The registry it came from (a path or URL). */
  registry: z.string(),
  installedAt: z.number(),
});

const installedFile = z.strictObject({ agents: z.record(z.string(), installedAgent) });

export type InstalledAgent = z.output<typeof installedAgent>;

/** Where installs live in a data directory: the managed list, and each agent's versions. */
export function installPaths(dataDir: string) {
  const { installedAgents, agents } = dataPaths(dataDir);
  return {
    /** Written only by installs and removals (0600); merged into the agents, the configuration's winning. */
    list: installedAgents,
    agents,
    versionDir: (id: string, version: string) => join(agents, id, version),
  };
}

/** `installed-agents.json` is not what Berth writes (edited by hand, cut short): the message names it and what to do. */
export class InstalledListError extends Error {
  override readonly name = "InstalledListError";
}

/**
 * The agents installed in a data directory; none when the file is missing. A damaged file is an {@link InstalledListError}.
 * The record has no prototype: an id such as `toString` or `__proto__` is simply not installed.
 */
export function readInstalledAgents(dataDir: string): Record<string, InstalledAgent> {
  const path = installPaths(dataDir).list;
  let body: string;
  try {
    body = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return ownRecord({});
    throw error;
  }
  let input: unknown;
  try {
    input = JSON.parse(body);
  } catch (error) {
    throw new InstalledListError(`${path} is damaged (${(error as Error).message}); remove it and install the agents again`);
  }
  const parsed = installedFile.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InstalledListError(`${path} is damaged (${issue.path.join(".")}: ${issue.message}); remove it and install the agents again`);
  }
  return ownRecord(parsed.data.agents);
}

function ownRecord(agents: Record<string, InstalledAgent>): Record<string, InstalledAgent> {
  return Object.assign(Object.create(null) as Record<string, InstalledAgent>, agents);
}

/** Replaces the list in one rename: a reader sees the old list or the new one, never half of either. */
export function writeInstalledAgents(dataDir: string, agents: Readonly<Record<string, InstalledAgent>>): void {
  const path = installPaths(dataDir).list;
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify({ agents }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}
