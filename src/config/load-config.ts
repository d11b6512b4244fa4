import { existsSync, readFileSync } from "node:fs";
import type { z } from "zod";
import { configSchema, type Config } from "./config-schema.js";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function describeIssues(source: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    const message =
      issue.code === "unrecognized_keys"
        ? `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}`
        : issue.code === "invalid_key"
          ? `bad key: ${issue.issues[0]?.message ?? issue.message}`
          : issue.message;
    return `  ${path}: ${message}`;
  });
  return `invalid configuration in ${source}:\n${lines.join("\n")}`;
}

/** Validates a configuration object; throws a ConfigError naming every bad key. */
export function parseConfig(input: unknown, source = "configuration"): Config {
  const result = configSchema.safeParse(input ?? {});
  if (!result.success) throw new ConfigError(describeIssues(source, result.error));
  const config = result.data;
  if (config.defaultAgent !== "demo" && !(config.defaultAgent in config.agents)) {
    throw new ConfigError(`invalid configuration in ${source}:\n  defaultAgent: no agent "${config.defaultAgent}" in "agents"`);
  }
  return config;
}

/**
 * Reads and validates the configuration file. A missing file at the default location
 * means "all defaults"; a missing file that was asked for explicitly is an error.
 */
export function loadConfigFile(path: string, { required }: { required: boolean }): Config {
  if (!existsSync(path)) {
    if (required) throw new ConfigError(`configuration file not found: ${path}`);
    return parseConfig({}, path);
  }
  let input: unknown;
  try {
    input = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ConfigError(`cannot read configuration file ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseConfig(input, path);
}

export type { Config };
