import { z } from "zod";
import type { Host } from "../host/host.js";
import type { ChangeStreams } from "./change-streams.js";
import { HttpError, readJsonBody } from "./http-io.js";
import type { PeerRest } from "./peer-rest.js";
import { parse } from "./rest-routes.js";
import { empty, json, type Route } from "./router.js";
import { requireSession, sessionRoute } from "./session-route.js";

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
  return [
    sessionRoute(host, peers, {
      method: "GET",
      path: "/api/sessions/:id/changes",
      answer: async ({ id }) => json(await host.changes(id)),
    }),
    sessionRoute(host, peers, {
      method: "GET",
      path: "/api/sessions/:id/changes/file",
      answer: async ({ id, url }) => {
        const path = url.searchParams.get("path");
        if (path === null) throw new HttpError(400, "invalid_query", "path is required: a file of the changes, relative to the repository");
        return json(await host.changedFile(id, path));
      },
    }),
    {
      method: "GET",
      path: "/api/sessions/:id/changes/events",
      // The stream is the owner's, which has the directory and sees its agent work: a client connects there (docs/review.md).
      handle: async ({ req, res, params }) => {
        requireSession(host, params.id!);
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
    sessionRoute(host, peers, {
      method: "GET",
      path: "/api/sessions/:id/comments",
      answer: ({ id }) => json({ comments: host.reviewComments(id) }),
    }),
    sessionRoute(host, peers, {
      method: "POST",
      path: "/api/sessions/:id/comments",
      body: async (req) => parse(newCommentBody, await readJsonBody(req)),
      answer: async ({ id, body }) => json(await host.addReviewComment(id, body), 201),
    }),
    sessionRoute(host, peers, {
      method: "PATCH",
      path: "/api/sessions/:id/comments/:commentId",
      body: async (req) => parse(editCommentBody, await readJsonBody(req)),
      answer: async ({ id, params, body }) => json(await host.editReviewComment(id, params.commentId!, body.body)),
    }),
    sessionRoute(host, peers, {
      method: "DELETE",
      path: "/api/sessions/:id/comments/:commentId",
      answer: async ({ id, params }) => {
        await host.deleteReviewComment(id, params.commentId!);
        return empty(204);
      },
    }),
    sessionRoute(host, peers, {
      method: "POST",
      path: "/api/sessions/:id/comments/send",
      // No body to read; an empty JSON one to the owner.
      body: async () => ({}),
      answer: async ({ id }) => json(await host.sendReviewComments(id), 202),
    }),
  ];
}
