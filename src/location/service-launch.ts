import type { ServiceConfig } from "../config/config-schema.js";

const PORT_PLACEHOLDER = "{port}";

/**
 * Refuses a service configuration the host cannot run as asked, naming the
 * service and what is wrong. The configuration file was validated already;
 * this guards the parts that only make sense together.
 */
export function assertRunnableService(name: string, config: ServiceConfig): void {
  const problem = problemOf(config);
  if (problem !== undefined) throw new Error(`service ${JSON.stringify(name)}: ${problem}`);
}

function problemOf(config: ServiceConfig): string | undefined {
  if (typeof config.command !== "string" || config.command.length === 0) return "command must be a non-empty string";
  if (!Number.isFinite(config.readyTimeout) || config.readyTimeout <= 0) {
    return `readyTimeout must be a positive number of milliseconds, got ${JSON.stringify(config.readyTimeout)}`;
  }
  if (config.port === undefined) {
    const usesPort = [...config.args, ...Object.values(config.env)].some((text) => text.includes(PORT_PLACEHOLDER));
    if (usesPort) return `uses ${PORT_PLACEHOLDER} in its args or env but has no port: "auto"`;
    if (config.mcp) return 'mcp needs port: "auto" (the MCP URL names the port)';
  }
  if (config.mcp && !config.mcp.path.startsWith("/")) {
    return `mcp path must start with "/", got ${JSON.stringify(config.mcp.path)}`;
  }
  return undefined;
}

/** The arguments and whole environment of one start: `{port}` substituted, `PORT` set when a port was allocated. */
export function launchArguments(config: ServiceConfig, port: number | undefined): { args: string[]; env: NodeJS.ProcessEnv } {
  const fill = (text: string): string => (port === undefined ? text : text.replaceAll(PORT_PLACEHOLDER, String(port)));
  const configured = Object.fromEntries(Object.entries(config.env).map(([name, value]) => [name, fill(value)]));
  // The port Berth waits on wins over a configured PORT.
  const portVariable = port === undefined ? {} : { PORT: String(port) };
  return { args: config.args.map(fill), env: { ...process.env, ...configured, ...portVariable } };
}
