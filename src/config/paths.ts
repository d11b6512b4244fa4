import { homedir } from "node:os";
import { join } from "node:path";

type Env = Readonly<Record<string, string | undefined>>;

/** `$XDG_DATA_HOME/berth`, else `~/.local/share/berth`. */
export function defaultDataDir(env: Env = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "berth");
}

/** `$XDG_CONFIG_HOME/berth/config.json`, else `~/.config/berth/config.json`. */
export function defaultConfigPath(env: Env = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "berth", "config.json");
}

/** Where everything of one host lives inside its data directory. */
export function dataPaths(dataDir: string) {
  return {
    dataDir,
    database: join(dataDir, "berth.sqlite"),
    token: join(dataDir, "token"),
    terminalOutput: join(dataDir, "terminal-output"),
    agentState: join(dataDir, "agent-state"),
    hostFile: join(dataDir, "host.json"),
  };
}
