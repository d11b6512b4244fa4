import { mkdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { agentStateDirs } from "./agent-state-dirs.js";
import { gitDirsOf } from "./git-dirs.js";
import type { SandboxMount } from "./bwrap-args.js";

/** Where the things a sandbox keeps writable, hides or shows again lie on this host. */
export interface SandboxPlaces {
  /** The user's home, whose secrets are hidden. */
  readonly home: string;
  /** Berth's data directory: hidden whole (the database, tokens, other sessions' worktrees, terminal output). */
  readonly dataDir: string;
  /** `<dataDir>/agent-state`. */
  readonly agentStateDir: string;
  /** `<dataDir>/agents`: installed agents, shown again read-only so they can run. */
  readonly installedAgentsDir: string;
  /** The directory of Berth's default configuration file (it may hold the cluster secret). */
  readonly configDir: string;
  /** `sandbox.binds` and the agent entry's `sandbox.binds`: more writable paths. */
  readonly binds: readonly string[];
  /** `sandbox.hide`: more hidden paths. */
  readonly hide: readonly string[];
}

/** The paths of one sandbox, as declared (some may not exist on this machine). */
export interface SandboxPaths {
  readonly writable: readonly string[];
  readonly hidden: readonly string[];
  readonly readOnly: readonly string[];
  /** The agent's own state directories: made before it starts if missing, or it could not make them itself. */
  readonly stateDirs: readonly string[];
}

/** Secrets in a home that no agent needs: keys, cloud credentials. */
const HOME_SECRETS = [".ssh", ".aws", join(".config", "gcloud"), ".gnupg", ".azure", ".kube", ".docker", ".netrc"];

/** What a sandbox at `directory` keeps writable, hides and shows again; `agent` adds that agent's own state. */
export function sandboxPaths(directory: string, places: SandboxPlaces, agent?: { readonly id: string; readonly command: string }): SandboxPaths {
  const state = agent ? agentStateDirs(agent.id, agent.command, places) : [];
  return {
    writable: [directory, ...gitDirsOf(directory), ...state, ...places.binds],
    stateDirs: state.filter((path) => !path.endsWith(".json")),
    hidden: [...HOME_SECRETS.map((name) => join(places.home, name)), places.dataDir, places.configDir, ...places.hide],
    readOnly: [places.installedAgentsDir],
  };
}

/**
 * The mounts of the paths that exist here, by their real paths (bwrap mounts onto real paths only); the agent's
 * missing state directories are made first (0700, as the agent would), where the user may.
 */
export function existingMounts(paths: SandboxPaths): SandboxMount[] {
  for (const dir of paths.stateDirs) makeDirectory(dir);
  const mounts: SandboxMount[] = [];
  const add = (kind: SandboxMount["kind"], path: string) => {
    const found = existing(path);
    if (found) mounts.push({ kind, path: found.path, ...(found.file ? { file: true } : {}) });
  };
  for (const path of paths.writable) add("writable", path);
  for (const path of paths.hidden) add("hidden", path);
  for (const path of paths.readOnly) add("read-only", path);
  return mounts;
}

function existing(path: string): { path: string; file: boolean } | undefined {
  try {
    const real = realpathSync(path);
    return { path: real, file: !statSync(real).isDirectory() };
  } catch {
    return undefined;
  }
}

function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // A home the user cannot write (nobody's /nonexistent): the agent finds it read-only, as it would have.
  }
}
