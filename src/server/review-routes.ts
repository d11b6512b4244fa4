import type { Host } from "../host/host.js";
import { readChanges } from "../changes/change-set.js";
import { readChangedFile } from "../changes/changed-file.js";
import { HttpError } from "./http-io.js";
import type { PeerRest } from "./peer-rest.js";
import { json, type Route } from "./router.js";

/** A session's changes and the review comments on them (docs/review.md); relayed to the owner host in a fleet, which has the directory. */
export function reviewRoutes(host: Host, peers: PeerRest): Route[] {
  const sessionCwd = (id: string): string => {
    const session = host.getSession(id);
    if (!session) throw new HttpError(404, "session_not_found", `no session "${id}"`);
    return session.cwd;
  };
  return [
    {
      method: "GET",
      path: "/api/sessions/:id/changes",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        const cwd = sessionCwd(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        return json(await readChanges(cwd));
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/changes/file",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        const cwd = sessionCwd(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        const path = url.searchParams.get("path");
        if (path === null) throw new HttpError(400, "invalid_query", "path is required: a file of the changes, relative to the repository");
        return json(await readChangedFile(cwd, path));
      },
    },
  ];
}
