import { homedir } from "node:os";
import { defaultConfigPath } from "../config/paths.js";
import { dirname } from "node:path";
import { sandboxAvailability, SandboxUnavailableError, type SandboxAvailability } from "./availability.js";
import type { SandboxPlan } from "./bwrap-args.js";
import { configuredPolicy, parseSandboxRequest, sessionPolicy, type ConfiguredPolicy, type SandboxPolicy, type SandboxRequest } from "./policy.js";
import { expandHome } from "../config/paths.js";
import { matchingLocation } from "./sandbox-locations.js";
import { existingMounts, sandboxPaths, type SandboxPlaces } from "./sandbox-paths.js";

/** An agent entry's `sandbox`, and a location's (`sandbox.locations`). */
interface SandboxLayerConfig extends Partial<SandboxRequest> {
  readonly binds: readonly string[];
}
/** The configuration's `sandbox`. */
interface SandboxConfig extends SandboxLayerConfig {
  readonly hide: readonly string[];
  /** The bubblewrap binary: a name looked up on PATH, or a path. */
  readonly bwrap: string;
  /** Directory (absolute or `~/…`) → the sandbox of sessions there; the longest that holds a session's wins. */
  readonly locations: Readonly<Record<string, SandboxLayerConfig>>;
}

export interface SandboxesOptions {
  readonly config: SandboxConfig;
  readonly agents: Readonly<Record<string, { readonly sandbox?: SandboxLayerConfig | undefined }>>;
  readonly dataDir: string;
  readonly agentStateDir: string;
  readonly installedAgentsDir: string;
  /** The configuration file Berth read, if any. */
  readonly configFile?: string;
  /** For tests: the user's home (default: the process's). */
  readonly home?: string;
}

/** What a session's view says of its sandbox: null when it has none. */
export interface SandboxView {
  readonly mode: SandboxPolicy["mode"];
  readonly network: SandboxPolicy["network"];
  readonly writable: readonly string[];
  readonly hidden: readonly string[];
}

/** Where an agent's sandbox is built: the session's directory, and the agent it runs. */
export interface SandboxSubject {
  readonly directory: string;
  /** What `sandbox.locations` is matched against: the session's directory, or the repository its worktree was made from. */
  readonly location: string;
  readonly agentId: string;
  readonly command: string;
}

/** The host's sandboxes: each session's policy, and the plans its processes start with (docs/sandbox.md). */
export class Sandboxes {
  private readonly home: string;

  constructor(private readonly options: SandboxesOptions) {
    this.home = options.home ?? homedir();
  }

  /** Whether this machine can run them; probed once. */
  availability(): SandboxAvailability {
    return sandboxAvailability(this.options.config.bwrap);
  }

  /**
   * The policy of a new session of `agentId` at `location` (see {@link SandboxSubject}): the configured one, made
   * stricter by the client's request (checked, `where` naming it in errors). A sandbox this machine cannot run is
   * refused now, with the fix.
   */
  policyForNewSession(agentId: string, location: string, asked: unknown, where: string): SandboxPolicy {
    const request = asked === undefined || asked === null ? undefined : parseSandboxRequest(asked, where);
    const policy = sessionPolicy(this.configured(agentId, location), request, where);
    if (policy.mode !== "off") this.requireBwrap();
    return policy;
  }

  /** A session's policy: the one stored with it, else (a session older than sandboxes) the configured one there. */
  policyOf(agentId: string, location: string, stored: SandboxPolicy | undefined): SandboxPolicy {
    return stored ?? this.configured(agentId, location);
  }

  /** The plan an agent child starts with; undefined when unsandboxed. Refuses, never starts unsandboxed, without bwrap. */
  agentPlan(policy: SandboxPolicy, subject: SandboxSubject): SandboxPlan | undefined {
    if (policy.mode === "off") return undefined;
    const bwrap = this.requireBwrap();
    const paths = sandboxPaths(subject.directory, this.places(subject), { id: subject.agentId, command: subject.command });
    return { bwrap, network: policy.network, mounts: existingMounts(paths) };
  }

  /**
   * The plan of a location's services: writable at the location alone, with the network (Berth waits on their port
   * from outside). Undefined when unsandboxed.
   */
  servicePlan(policy: SandboxPolicy, directory: string): SandboxPlan | undefined {
    if (policy.mode === "off") return undefined;
    const bwrap = this.requireBwrap();
    return { bwrap, network: "on", mounts: existingMounts(sandboxPaths(directory, this.places(undefined))) };
  }

  /** The session view's `sandbox`: the declared paths, whether or not each exists here. */
  view(policy: SandboxPolicy, subject: SandboxSubject): SandboxView | null {
    if (policy.mode === "off") return null;
    const paths = sandboxPaths(subject.directory, this.places(subject), { id: subject.agentId, command: subject.command });
    return { mode: policy.mode, network: policy.network, writable: paths.writable, hidden: paths.hidden };
  }

  private configured(agentId: string, location: string): ConfiguredPolicy {
    return configuredPolicy(this.options.agents[agentId]?.sandbox, this.options.config, this.locationOf(location));
  }

  private locationOf(location: string) {
    return matchingLocation(this.options.config.locations, location, this.home);
  }

  private requireBwrap(): string {
    const availability = this.availability();
    if (availability.state === "unavailable") throw new SandboxUnavailableError(availability);
    return availability.bwrap;
  }

  /** Where a sandbox's paths lie; a session's adds its agent's and its location's `binds`, a service's neither. */
  private places(subject: SandboxSubject | undefined): SandboxPlaces {
    const { config, dataDir, agentStateDir, installedAgentsDir } = this.options;
    const agentBinds = subject === undefined ? [] : (this.options.agents[subject.agentId]?.sandbox?.binds ?? []);
    const locationBinds = subject === undefined ? [] : (this.locationOf(subject.location)?.layer.binds ?? []);
    const expand = (path: string) => expandHome(path, this.home);
    return {
      home: this.home,
      dataDir,
      agentStateDir,
      installedAgentsDir,
      configDir: dirname(defaultConfigPath()),
      binds: [...config.binds, ...agentBinds, ...locationBinds].map(expand),
      hide: [...config.hide.map(expand), ...(this.options.configFile ? [this.options.configFile] : [])],
    };
  }
}
