import { statSync } from "node:fs";
import type { PeerSession } from "./fleet-directory.js";

/**
 * Why this host does not run a session another host of the fleet owns: its owner is online (use that host), or it is
 * offline and this host may not adopt it (adoption is off here, the session's directory does not exist here, or its
 * agent is not configured here), or
 * another host adopted it first.
 */
export type NotRunHere = "owner_online" | "owner_offline" | "adoption_off" | "directory_missing" | "agent_unknown" | "adopted_elsewhere";

/** Why a peer's session is not run here, as its state in the directory says (`adopt`: this host's `fleet.adopt`). */
export function refusalFor(peer: PeerSession, adopt: boolean): OwnedByOtherHostError {
  const { id, cwd } = peer.session;
  if (peer.ownerOnline) return new OwnedByOtherHostError(id, peer.owner);
  if (!adopt) return new OwnedByOtherHostError(id, peer.owner, "adoption_off");
  if (!isDirectory(cwd)) return new OwnedByOtherHostError(id, peer.owner, "directory_missing", cwd);
  return new OwnedByOtherHostError(id, peer.owner, "owner_offline");
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A request that would change, run or answer in a session another host of the fleet owns: read-only here (docs/fleet.md). */
export class OwnedByOtherHostError extends Error {
  override readonly name = "OwnedByOtherHostError";
  constructor(
    readonly sessionId: string,
    readonly owner: PeerSession["owner"],
    readonly why: NotRunHere = "owner_online",
    /** What is missing here: the session's directory (`directory_missing`), its agent (`agent_unknown`). */
    missing?: string,
  ) {
    super(messageOf(sessionId, owner, why, missing));
  }
}

function messageOf(sessionId: string, owner: PeerSession["owner"], why: NotRunHere, missing: string | undefined): string {
  const url = owner?.url ?? "no URL registered: set fleet.url on that host";
  if (why === "adopted_elsewhere") return `session "${sessionId}" was adopted meanwhile by host "${owner?.id}" (${url}): use that host`;
  const whose = owner ? `session "${sessionId}" is owned by host "${owner.id}" (${url})` : `session "${sessionId}" has no owner host in the fleet`;
  if (why === "owner_online") return `${whose}: on this host it is read-only; use that host`;
  const offline = owner ? `${whose}, which is offline (no heartbeat within fleet.hostTtl)` : whose;
  if (why === "owner_offline") return `${offline}: open it on this host (ACP session/load or session/resume) to adopt it here`;
  if (why === "adoption_off") return `${offline}: this host does not adopt sessions (fleet.adopt is off), so here it is read-only`;
  if (why === "agent_unknown")
    return `${offline}: this host cannot adopt it, this host has no agent "${missing}" (adopt it on a host that configures it)`;
  return `${offline}: this host cannot adopt it, its directory ${missing} does not exist here (adoption needs the same directory, a shared filesystem)`;
}
