import { DIRECTORY_LOOK_TIMEOUT_MS, lookAtDirectory } from "../location/directory-presence.js";
import type { PeerSession } from "./fleet-directory.js";

/**
 * Why this host does not run a session another host of the fleet owns: its owner is online (use that host), or it is
 * offline and this host may not adopt it (adoption is off here, the session's directory does not exist here, or its
 * agent is not configured here), or
 * another host adopted it first.
 */
export type NotRunHere =
  | "owner_online"
  | "owner_offline"
  | "adoption_off"
  | "directory_missing"
  | "directory_unanswered"
  | "agent_unknown"
  | "adopted_elsewhere";

/**
 * Why a peer's session is not run here, as its state in the directory says (`adopt`: this host's `fleet.adopt`). It looks
 * at no file: request paths (REST reads, answers) call it, and a network filesystem may hang; adoption looks at the
 * session's directory itself ({@link directoryRefusal}).
 */
export function refusalFor(peer: PeerSession, adopt: boolean): OwnedByOtherHostError {
  const { id } = peer.session;
  if (peer.ownerOnline) return new OwnedByOtherHostError(id, peer.owner);
  if (!adopt) return new OwnedByOtherHostError(id, peer.owner, "adoption_off");
  return new OwnedByOtherHostError(id, peer.owner, "owner_offline");
}

/** Why a peer's session cannot be adopted here for its directory: it is no directory here, or did not answer in time; undefined if it is one. */
export async function directoryRefusal(peer: PeerSession): Promise<OwnedByOtherHostError | undefined> {
  const { id, cwd } = peer.session;
  const found = await lookAtDirectory(cwd);
  if (found === "directory") return undefined;
  return new OwnedByOtherHostError(id, peer.owner, found === "unanswered" ? "directory_unanswered" : "directory_missing", cwd);
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
  if (why === "owner_offline") {
    return `${offline}: open it over ACP (session/load or session/resume) on a host where its directory exists to adopt it there`;
  }
  if (why === "adoption_off") return `${offline}: this host does not adopt sessions (fleet.adopt is off), so here it is read-only`;
  if (why === "agent_unknown")
    return `${offline}: this host cannot adopt it, this host has no agent "${missing}" (adopt it on a host that configures it)`;
  if (why === "directory_unanswered") {
    return `${offline}: this host cannot adopt it now, its directory ${missing} did not answer within ${DIRECTORY_LOOK_TIMEOUT_MS / 1000} s (a hung network filesystem?)`;
  }
  return `${offline}: this host cannot adopt it, its directory ${missing} does not exist here (adoption needs the same directory, a shared filesystem)`;
}
