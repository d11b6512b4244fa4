import { useMemo, useState } from "preact/hooks";
import type { ChangedFileView, NewReviewComment, ReviewComment } from "../api/types.js";
import { lineDiff } from "../content/line-diff.js";
import { anchorKey, anchorOf, anchorWords, placeComments } from "../review/comment-anchors.js";
import { DiffView } from "./DiffView.js";
import { CommentBox, CommentCard } from "./ReviewComments.js";

/**
 * One changed file's diff to review (a chunk of its own, loaded when a file is opened): a click or a tap on a line
 * opens a comment box under it; saved comments show under their lines, those on lines the diff no longer shows above it.
 * Each line's box stays open until it is saved or cancelled, whatever other boxes open meanwhile: a save that fails
 * after the person moved on still says so, with the text kept.
 */
export function FileReview({
  file,
  comments,
  onAdd,
  onEdit,
  onDelete,
}: {
  file: ChangedFileView;
  /** This file's comments. */
  comments: readonly ReviewComment[];
  onAdd: (comment: NewReviewComment) => Promise<void>;
  onEdit: (commentId: string, body: string) => Promise<void>;
  onDelete: (commentId: string) => Promise<void>;
}) {
  /** The lines whose comment box is open, by their anchor's key. */
  const [composing, setComposing] = useState<ReadonlySet<string>>(new Set());
  const close = (key: string) =>
    setComposing((open) => {
      const rest = new Set(open);
      rest.delete(key);
      return rest;
    });
  const newText = file.newText ?? "";
  const diff = useMemo(() => lineDiff(file.oldText, newText), [file.oldText, newText]);
  const placed = useMemo(() => placeComments(diff.lines, comments), [diff, comments]);
  const card = (comment: ReviewComment) => (
    <CommentCard
      key={comment.id}
      comment={comment}
      where={anchorWords(file.path, comment)}
      onEdit={(body) => onEdit(comment.id, body)}
      onDelete={() => onDelete(comment.id)}
    />
  );
  return (
    <>
      {placed.elsewhere.length === 0 ? null : (
        <div class="review-thread elsewhere">
          <p class="meta">On lines this diff no longer shows:</p>
          {placed.elsewhere.map(card)}
        </div>
      )}
      <DiffView
        path={file.path}
        oldText={file.oldText}
        newText={newText}
        review={{
          diff,
          pickLabel: (row) => {
            const anchor = anchorOf(row);
            return anchor ? `Comment on ${anchorWords(file.path, anchor)}` : null;
          },
          pick: (row) => {
            const anchor = anchorOf(row);
            if (anchor) setComposing((open) => new Set(open).add(anchorKey(anchor)));
          },
          below: (row) => {
            const anchor = anchorOf(row);
            if (!anchor) return null;
            const key = anchorKey(anchor);
            const here = placed.byRow.get(key) ?? [];
            const open = composing.has(key);
            if (here.length === 0 && !open) return null;
            return (
              <div class="review-thread">
                {here.map(card)}
                {open ? (
                  <CommentBox
                    label={`Comment on ${anchorWords(file.path, anchor)}`}
                    onSave={async (body) => {
                      await onAdd({ path: file.path, ...anchor, body });
                      close(key);
                    }}
                    onCancel={() => close(key)}
                  />
                ) : null}
              </div>
            );
          },
        }}
      />
    </>
  );
}
