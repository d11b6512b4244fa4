import { z } from "zod";

/** `off`: the agent runs as the user, as without Berth. `workspace-write`: read-only everywhere but its own places. */
type SandboxMode = "off" | "workspace-write";
/** `off`: a network namespace of its own, with nothing but its own loopback. */
export type SandboxNetwork = "on" | "off";

/** What a session asked, stored with it so that every child of it, after a restart too, runs the same way. */
export interface SandboxPolicy {
  readonly mode: SandboxMode;
  readonly network: SandboxNetwork;
}

const NO_SANDBOX: SandboxPolicy = { mode: "off", network: "on" };

const MODE_FORM = 'expected "off" or "workspace-write"';
const NETWORK_FORM = 'expected "on" or "off"';

/** A policy as a client or the configuration writes it: `network` may be left out (then: on). */
const sandboxRequestSchema = z.strictObject(
  {
    mode: z.enum(["off", "workspace-write"], { error: MODE_FORM }),
    network: z.enum(["on", "off"], { error: NETWORK_FORM }).optional(),
  },
  { error: 'expected { "mode": "off" | "workspace-write", "network"?: "on" | "off" }' },
);

export type SandboxRequest = z.infer<typeof sandboxRequestSchema>;

/** A request that names something Berth does not know; the message says what and where. */
export class InvalidSandboxError extends Error {
  override readonly name = "InvalidSandboxError";
}

/** Validates a client's request (`_meta["berth/sandbox"]`, the REST body's `sandbox`), naming where it came from. */
export function parseSandboxRequest(value: unknown, where: string): SandboxRequest {
  const parsed = sandboxRequestSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const at = issue.path.length > 0 ? `${where}.${issue.path.join(".")}` : where;
  throw new InvalidSandboxError(`${at}: ${issue.message}, got ${JSON.stringify(pick(value, issue.path))}`);
}

function pick(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) current = typeof current === "object" && current !== null ? (current as Record<PropertyKey, unknown>)[key] : undefined;
  return current;
}

/** A layer of the configuration's sandbox: the host's, an agent entry's, a location's; what it leaves out falls through. */
type SandboxLayer = Partial<SandboxRequest> | undefined;

/** What the configuration decides for a session, and where it decided it (for a refusal's words). */
export interface ConfiguredPolicy extends SandboxPolicy {
  /** The `sandbox.locations` key the session's directory lies in, if any. */
  readonly location?: string;
}

/**
 * The policy the host's administrator set for a session: the agent's entry over the host's, and, when the session's
 * directory lies in a configured location, that location's over the host's; where both apply the stricter wins
 * (sandboxed if either is, no network if either says so). A `network` left out falls through, and to "on" at the end.
 */
export function configuredPolicy(
  agentEntry: SandboxLayer,
  host: SandboxLayer,
  location?: { readonly key: string; readonly layer: SandboxLayer },
): ConfiguredPolicy {
  const agent = over(agentEntry, host);
  if (!location) return agent;
  const place = over(location.layer, host);
  return {
    mode: agent.mode !== "off" ? agent.mode : place.mode,
    network: agent.network === "off" || place.network === "off" ? "off" : "on",
    location: location.key,
  };
}

function over(layer: SandboxLayer, host: SandboxLayer): SandboxPolicy {
  return { mode: layer?.mode ?? host?.mode ?? "off", network: layer?.network ?? host?.network ?? "on" };
}

/**
 * A session's policy: the configured one, made stricter by what its client asked, never looser — the administrator's
 * sandbox is a floor, so a client asking for less is refused, not obeyed.
 */
export function sessionPolicy(configured: ConfiguredPolicy, asked: SandboxRequest | undefined, where: string): SandboxPolicy {
  const { mode, network } = configured;
  if (!asked) return { mode, network };
  const here = configured.location === undefined ? "" : ` in ${configured.location} (sandbox.locations)`;
  if (asked.mode === "off" && mode !== "off")
    throw new InvalidSandboxError(`${where}.mode: "off" is refused: this host's configuration sandboxes this agent${here} (mode "${mode}")`);
  if (asked.mode !== "off" && asked.network === "on" && network === "off")
    throw new InvalidSandboxError(`${where}.network: "on" is refused: this host's configuration gives sandboxes of this agent${here} no network`);
  return { mode: asked.mode, network: asked.mode === "off" ? "on" : (asked.network ?? network) };
}

/** A stored policy (the session's `agentRequest.sandbox`), or undefined when the session predates sandboxes. */
export function storedPolicy(value: unknown): SandboxPolicy | undefined {
  // A session older than sandboxes (a list asks for each of its sessions): a failed parse would build an error only to drop it.
  if (value === undefined) return undefined;
  const parsed = sandboxRequestSchema.safeParse(value);
  return parsed.success ? { mode: parsed.data.mode, network: parsed.data.network ?? "on" } : undefined;
}

/** The policy of what serves several sessions at once (a location's services): sandboxed if any of them is. */
export function strictestPolicy(policies: readonly SandboxPolicy[]): SandboxPolicy {
  const sandboxed = policies.some((policy) => policy.mode !== "off");
  if (!sandboxed) return NO_SANDBOX;
  return { mode: "workspace-write", network: policies.some((policy) => policy.mode !== "off" && policy.network === "off") ? "off" : "on" };
}
