import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** The snapshot Berth ships: the agents it tests, at the versions it tests (resolves from `src/agents` and `dist/agents`). */
export const shippedCatalogue = fileURLToPath(new URL("../../catalogue/registry.json", import.meta.url));

const text = z.string({ error: "expected a non-empty string" }).min(1, "expected a non-empty string");
const args = z.array(z.string({ error: "expected a string" })).default([]);
const env = z.record(z.string(), z.string({ error: "expected a string value" })).default({});

const binaryTarget = z.object({
  archive: text,
  cmd: text,
  args,
  env,
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "expected 64 hex digits")
    .optional(),
});

/** One entry of an ACP Agent Registry `registry.json` (unknown fields, such as `icon` or `authors`, are kept out). */
const catalogueEntry = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "expected an id of lowercase letters, digits, '.', '_' and '-'"),
  name: text,
  // A folder's name in the data directory: no path of its own.
  version: z
    .string({ error: "expected a version" })
    .regex(/^[0-9A-Za-z][0-9A-Za-z.+_-]*$/, "expected a version such as 1.2.3 (letters, digits, '.', '+', '_', '-')"),
  description: z.string().optional(),
  distribution: z
    .object({
      npx: z.object({ package: text, args, env }).optional(),
      binary: z.record(z.string(), binaryTarget).optional(),
      uvx: z.object({ package: text, args, env }).optional(),
    })
    .refine((d) => d.npx !== undefined || d.binary !== undefined || d.uvx !== undefined, "expected at least one of npx, binary, uvx"),
});

const catalogueSchema = z.object({ agents: z.array(catalogueEntry, { error: "expected a list of agents" }) });

export type CatalogueEntry = z.output<typeof catalogueEntry>;
export type DistributionKind = "npx" | "binary" | "uvx";

/** A registry that cannot be read or is not in the ACP Agent Registry format (`unreadable`), or has no such agent. */
export class CatalogueError extends Error {
  override readonly name = "CatalogueError";
  constructor(
    message: string,
    readonly kind: "unreadable" | "unknown_agent" = "unreadable",
  ) {
    super(message);
  }
}

/** A registry's entries, and where relative paths in them are resolved from (the registry file's directory). */
export interface Catalogue {
  readonly source: string;
  readonly base: string;
  readonly agents: readonly CatalogueEntry[];
}

function isUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

/** Reads a registry from a path or an http(s) URL; a bad one is a {@link CatalogueError} naming the source and what is wrong. */
export async function readCatalogue(source: string, cwd = process.cwd()): Promise<Catalogue> {
  let body: string;
  let base: string;
  if (isUrl(source)) {
    base = new URL(".", source).href;
    try {
      const response = await fetch(source, { signal: AbortSignal.timeout(30_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      body = await response.text();
    } catch (error) {
      throw new CatalogueError(`cannot read the agent registry ${source}: ${(error as Error).message}`);
    }
  } else {
    const path = source.startsWith("file:") ? fileURLToPath(source) : resolve(cwd, source);
    base = dirname(path);
    try {
      body = await readFile(path, "utf8");
    } catch (error) {
      throw new CatalogueError(`cannot read the agent registry ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  let input: unknown;
  try {
    input = JSON.parse(body);
  } catch (error) {
    throw new CatalogueError(`the agent registry ${source} is not JSON: ${(error as Error).message}`);
  }
  const parsed = catalogueSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    throw new CatalogueError(`the agent registry ${source} is not in the ACP Agent Registry format: ${problems.join("; ")}`);
  }
  return { source, base, agents: parsed.data.agents };
}

/** The entry of `id`; an unknown id is a {@link CatalogueError} listing the known ones. */
export function catalogueEntryOf(catalogue: Catalogue, id: string): CatalogueEntry {
  const entry = catalogue.agents.find((agent) => agent.id === id);
  if (!entry)
    throw new CatalogueError(
      `no agent "${id}" in the agent registry ${catalogue.source} (it has: ${catalogue.agents.map((a) => a.id).join(", ") || "none"})`,
      "unknown_agent",
    );
  return entry;
}

/** A location in an entry (an archive, a tarball): a URL as it is, a path resolved from the registry's own location. */
export function resolveLocation(catalogue: Catalogue, location: string): string {
  if (isUrl(location) || location.startsWith("file:")) return location.startsWith("file:") ? fileURLToPath(location) : location;
  if (isAbsolute(location)) return location;
  return isUrl(catalogue.base) ? new URL(location, catalogue.base).href : resolve(catalogue.base, location);
}

/** The ACP registry's platform key of this machine, e.g. `linux-x86_64`, `darwin-aarch64`. */
export function platformKey(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  const os = platform === "win32" ? "windows" : platform;
  const cpu = arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : arch;
  return `${os}-${cpu}`;
}
