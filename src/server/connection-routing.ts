import {
  methods,
  RequestError,
  type AuthenticateRequest,
  type InitializeRequest,
  type NewSessionRequest,
  type NewSessionResponse,
} from "@agentclientprotocol/sdk";
import { isAbsolute } from "node:path";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import type { DirectoryPresence, SessionOwner } from "../host/views.js";
import type { HOST_META, PLACEMENT_META } from "../protocol/meta-keys.js";
import type { ClusterSecret } from "./cluster-secret.js";
import { PeerRelay } from "./peer-relay.js";
import { readPeers } from "./peer-reads.js";
import { routeOf, type PeerHost } from "./peer-route.js";

/** The fleet host a `session/new` names, and the `_meta` key it named it with (for its errors). */
export interface NamedPlacement {
  readonly host: string;
  readonly key: typeof PLACEMENT_META | typeof HOST_META;
}

export interface ConnectionRoutingOptions {
  readonly host: Host;
  /** The fleet's secret; without one nothing is relayed. */
  readonly cluster: ClusterSecret | undefined;
  /** The peer host that relayed this connection here: nothing of it is relayed on. */
  readonly relayedBy: string | undefined;
  /** The agent the connection named (`/acp?agent=ID`). */
  readonly agentId: string | undefined;
  readonly log: Logger;
  /** Passes an owner's notification to the client. */
  readonly notify: (method: string, params: unknown) => void | Promise<void>;
  /** Puts an owner's request to the client. */
  readonly ask: (method: string, params: unknown, signal: AbortSignal) => Promise<unknown>;
}

/**
 * Where one client connection's requests for sessions are answered (docs/fleet.md, "Routing"): here,
 * or at the session's owner host, through this connection's {@link PeerRelay}. It also remembers the
 * sessions it placed on other hosts, so that a request right after `session/new` goes to the owner
 * even before this host's view of the fleet shows the session.
 */
export class ConnectionRouting {
  private readonly relay: PeerRelay | undefined;
  private readonly selfId: string | null;
  private readonly known = new Map<string, PeerHost>();

  constructor(private readonly options: ConnectionRoutingOptions) {
    const { host, cluster, relayedBy, agentId, log, notify, ask } = options;
    this.selfId = host.hostId;
    this.relay =
      cluster?.configured && relayedBy === undefined && this.selfId !== null ? new PeerRelay({ cluster, agentId, log, notify, ask }) : undefined;
  }

  /** The client's `initialize`, which every connection to an owner repeats. */
  initialized(request: InitializeRequest): void {
    this.relay?.initialized(request);
  }

  /** The client's `authenticate`, which the agent accepted here: repeated to every owner host this connection uses. */
  authenticated(request: AuthenticateRequest): void {
    this.relay?.authenticated(request);
  }

  /** The client left: the owners release what it held there. */
  close(): void {
    this.relay?.close();
  }

  /** The client's request relayed to the session's owner, or undefined when this host answers it. */
  request(sessionId: string, method: string, params: unknown, signal: AbortSignal): Promise<never> | undefined {
    const owner = this.ownerOf(sessionId);
    if (!owner) return undefined;
    return this.relay!.request(owner, method, params, signal) as Promise<never>;
  }

  /** The client's notification relayed to the session's owner (true), or left to this host (false). */
  notify(sessionId: string, method: string, params: unknown): boolean {
    const owner = this.ownerOf(sessionId);
    if (!owner) return false;
    this.relay!.notify(owner, method, params).catch((error: unknown) =>
      this.options.log.warn({ err: error, method, owner: owner.id }, "client notification could not be relayed"),
    );
    return true;
  }

  /**
   * `session/new` on the host `_meta["berth/placement"]` (or the deprecated `berth/host`) names, or else, when its directory is not one here, on the host that
   * has it, relayed there; undefined to create it here (this host named, or none and the directory is here or nowhere).
   */
  async createElsewhere(
    named: NamedPlacement | undefined,
    agent: string | undefined,
    params: NewSessionRequest,
    signal: AbortSignal,
    /** The directory the session needs: its cwd, or the repository of the worktree it asks for. */
    directory: string = params.cwd,
  ): Promise<NewSessionResponse | undefined> {
    const target = named === undefined ? await this.hostWithDirectory(directory, agent) : this.placement(named);
    if (!target) return undefined;
    const answer = (await this.relay!.request(target, methods.agent.session.new, params, signal)) as NewSessionResponse;
    this.known.set(answer.sessionId, target);
    this.options.log.info(
      { sessionId: answer.sessionId, host: target.id, cwd: params.cwd, placedBy: named === undefined ? "directory" : "meta" },
      "client created a session on another host of the fleet",
    );
    return answer;
  }

  /**
   * The host's view decides as soon as it has the session (another host's, or this host's own after an
   * adoption): what this connection placed elsewhere only stands in until then, else a client would be
   * sent on to an owner that is gone.
   */
  private ownerOf(sessionId: string): PeerHost | undefined {
    // Nothing is relayed from here: no need to read the store on every request.
    if (!this.relay) return undefined;
    const { host } = this.options;
    let owner: SessionOwner | undefined;
    if (host.hasSession(sessionId)) {
      this.known.delete(sessionId);
      owner = host.sessionOwner(sessionId);
    } else {
      const known = this.known.get(sessionId);
      owner = known && { ...known, online: true };
    }
    const route = routeOf(owner, { canRelay: this.relay !== undefined });
    return route.kind === "relay" ? route.owner : undefined;
  }

  /**
   * The online peer that has `cwd` as a directory and `agent` (if one is named), when this host has not the directory
   * (the first by id if several do); undefined when this host has it, no peer has it, or this connection relays nothing
   * (no secret, or relayed here by a peer). Refused when the directory does not answer here, or only peers without the
   * agent have it.
   */
  private async hostWithDirectory(cwd: string, agent: string | undefined): Promise<PeerHost | undefined> {
    const { host, cluster, log } = this.options;
    // A path no session could have is refused by the creation here, saying why.
    if (!this.relay || !cluster || !isAbsolute(cwd) || cwd.includes("\0")) return undefined;
    const here = await host.lookAtDirectory(cwd);
    if (here === "directory") return undefined;
    if (here === "unanswered")
      throw RequestError.invalidParams(
        { cwd, code: "directory_unanswered" },
        `the directory ${cwd} did not answer within 2 s on this host (a hung network file system?): no session is created in it`,
      );
    const { answers, unreachable } = await readPeers(host, cluster, `/api/directory?path=${encodeURIComponent(cwd)}`, isDirectoryAnswer);
    if (unreachable.length > 0)
      log.warn({ cwd, unreachable }, "placing a new session: some peer hosts could not be asked whether they have its directory");
    const withDirectory = answers.filter(({ body }) => body.path === cwd && body.found === "directory");
    const usable = new Set(withDirectory.filter(({ body }) => agent === undefined || body.agents.includes(agent)).map((answer) => answer.host));
    if (usable.size === 0 && withDirectory.length > 0)
      throw RequestError.invalidParams(
        { cwd, agent, code: "agent_unknown" },
        `the directory ${cwd} is not on this host; host(s) ${withDirectory.map((answer) => `"${answer.host}"`).join(", ")} have it, but no agent "${agent}"`,
      );
    const target = (host.hosts() ?? []).filter((peer) => usable.has(peer.id) && peer.url !== null).sort((a, b) => a.id.localeCompare(b.id))[0];
    return target && { id: target.id, url: target.url! };
  }

  private placement({ host: named, key }: NamedPlacement): PeerHost | undefined {
    const { selfId } = this;
    if (named === selfId) return undefined;
    const hosts = this.options.host.hosts();
    if (!hosts) throw RequestError.invalidParams({ key }, `_meta["${key}"] names host "${named}", but this host is not in a fleet`);
    const target = hosts.find((candidate) => candidate.id === named);
    if (!target)
      throw RequestError.invalidParams(
        { key, code: "unknown_host" },
        `_meta["${key}"] names host "${named}", which is not in the fleet (its hosts: ${hosts.map((h) => `"${h.id}"`).join(", ")})`,
      );
    if (!target.online)
      throw RequestError.invalidRequest({ code: "host_offline", host: named }, `host "${named}" is offline: a new session cannot be placed on it`);
    if (!this.relay || target.url === null)
      throw RequestError.invalidRequest({ code: "not_relayed", host: named }, this.notRelayed(named, target.url));
    return { id: target.id, url: target.url };
  }

  private notRelayed(named: string, url: string | null): string {
    if (this.options.relayedBy !== undefined)
      return `a session relayed from host "${this.options.relayedBy}" is placed on this host ("${this.selfId}") or nowhere`;
    if (url === null) return `host "${named}" registered no URL (fleet.url) to relay to`;
    return `this host has no cluster secret (fleet.secret): it cannot place a session on host "${named}"; connect to that host instead`;
  }
}

/** A peer's answer to `GET /api/directory`. */
function isDirectoryAnswer(body: unknown): body is { path: string; found: DirectoryPresence; agents: string[] } {
  const answer = body as { path?: unknown; found?: unknown; agents?: unknown } | null;
  return (
    typeof answer === "object" &&
    answer !== null &&
    typeof answer.path === "string" &&
    typeof answer.found === "string" &&
    Array.isArray(answer.agents) &&
    answer.agents.every((agent) => typeof agent === "string")
  );
}
