import { z } from "zod";
import type { Host } from "../host/host.js";
import { readChanges } from "../changes/change-set.js";
import { checkedPath, readChangedFile } from "../changes/changed-file.js";
import { ChangesError } from "../changes/changes-error.js";
import { MAX_COMMENT_BYTES } from "../host/review-desk.js";
import type { ChangeStreams } from "./change-streams.js";
import { HttpError, readJsonBody } from "./http-io.js";
import type { PeerRest } from "./peer-rest.js";
import { parse } from "./rest-routes.js";
import { empty, json, type Route } from "./router.js";

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
    {
      method: "GET",
      path: "/api/sessions/:id/changes/events",
      // The stream is the owner's, which has the directory and sees its agent work: a client connects there (docs/review.md).
      handle: async ({ req, res, params }) => {
        const cwd = sessionCwd(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner)
          throw new HttpError(
            409,
            "owned_by_other_host",
            `session "${params.id}" runs on host "${owner.id}" (${owner.url}): follow its changes there`,
          );
        changeStreams.attach(params.id!, cwd, await readChanges(cwd), res);
        return undefined;
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/comments",
      peers: "relay",
      handle: ({ req, url, params }) => {
        sessionCwd(params.id!);
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
        const cwd = sessionCwd(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url, comment);
        const path = checkedPath(comment.path);
        // A comment is on the changes: a file the agent did not change (or a mistyped path) is refused by name.
        const { files } = await readChanges(cwd);
        if (!files.some((file) => file.path === path || (comment.side === "old" && file.oldPath === path)))
          throw new ChangesError("path_not_in_changes", `path ${JSON.stringify(comment.path)} is not among the session's changed files`);
        return json(await host.addReviewComment(params.id!, { ...comment, path }), 201);
      },
    },
    {
      method: "PATCH",
      path: "/api/sessions/:id/comments/:commentId",
      peers: "relay",
      handle: async ({ req, url, params }) => {
        const { body } = parse(editCommentBody, await readJsonBody(req));
        sessionCwd(params.id!);
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
        sessionCwd(params.id!);
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
        sessionCwd(params.id!);
        const owner = peers.ownerFor(params.id!, req);
        if (owner) return peers.relay(owner, req, url, {});
        return json(await host.sendReviewComments(params.id!), 202);
      },
    },
  ];
}
