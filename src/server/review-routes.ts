import { z } from "zod";
import type { Host } from "../host/host.js";
import type { ChangeStreams } from "./change-streams.js";
import { HttpError, readJsonBody } from "./http-io.js";
import type { PeerRest } from "./peer-rest.js";
import { parse } from "./rest-routes.js";
import { empty, json, type Route } from "./router.js";

/** The longest comment body taken: a paragraph or two, not a file pasted in. */
const MAX_COMMENT_BYTES = 8 * 1024;

const commentText = z
  .string({ error: "expected the comment's text" })
  .refine((body) => body.trim() !== "", "expected a non-empty comment")
  .refine((body) => Buffer.byteLength(body) <= MAX_COMMENT_BYTES, `a comment is at most ${MAX_COMMENT_BYTES} bytes`);

const newCommentBody = z.strictObject({
  path: z.string({ error: "expected a file of the changes" }),
  line: z.number({ error: "expected a line number" }).int("expected a whole line number").min(1, "line numbers start at 1"),
  side: z.enum(["new", "old"], { error: 'expected "new" (the changed file) or "old" (the base\'s)' }),
  body: commentText,
});

const editCommentBody = z.strictObject({ body: commentText });

/** A session's changes and the review comments on them (docs/review.md); relayed to the owner host in a fleet, which has the directory. */
export function reviewRoutes(host: Host, peers: PeerRest, changeStreams: ChangeStreams): Route[] {
  const requireSession = (id: string): void => {
    if (!host.getSession(id)) throw new HttpError(404, "session_not_found", `no session "${id}"`);
  };
  return [
    {
      method: "GET",
      path: "/api/sessions/:id/changes",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        return json(await host.changes(params.id!));
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/changes/file",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        const path = url.searchParams.get("path");
        if (path === null) throw new HttpError(400, "invalid_query", "path is required: a file of the changes, relative to the repository");
        return json(await host.changedFile(params.id!, path));
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/changes/events",
      // The stream is the owner's, which has the directory and sees its agent work: a client connects there (docs/review.md).
      handle: async ({ req, res, params }) => {
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner)
          throw new HttpError(
            409,
            "owned_by_other_host",
            `session "${params.id}" runs on host "${owner.id}" (${owner.url}): follow its changes there`,
          );
        changeStreams.attach(params.id!, await host.changes(params.id!), res);
        return undefined;
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/comments",
      peers: "relay",
      handle: ({ req, url, params }) => {
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        return json({ comments: host.reviewComments(params.id!) });
      },
    },
    {
      method: "POST",
      path: "/api/sessions/:id/comments",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        const comment = parse(newCommentBody, await readJsonBody(req));
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url, comment);
        return json(await host.addReviewComment(params.id!, comment), 201);
      },
    },
    {
      method: "PATCH",
      path: "/api/sessions/:id/comments/:commentId",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        const { body } = parse(editCommentBody, await readJsonBody(req));
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url, { body });
        return json(await host.editReviewComment(params.id!, params.commentId!, body));
      },
    },
    {
      method: "DELETE",
      path: "/api/sessions/:id/comments/:commentId",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url);
        await host.deleteReviewComment(params.id!, params.commentId!);
        return empty(204);
      },
    },
    {
      method: "POST",
      path: "/api/sessions/:id/comments/send",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        requireSession(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url, {});
        return json(await host.sendReviewComments(params.id!), 202);
      },
    },
  ];
}
