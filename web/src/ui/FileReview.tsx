import { useMemo, useState } from "preact/hooks";
import type { ChangedFileView, NewReviewComment, ReviewComment } from "../api/types.js";
import { lineDiff } from "../content/line-diff.js";
import { anchorKey, anchorOf, anchorWords, type LineAnchor, placeComments } from "../review/comment-anchors.js";
import { DiffView } from "./DiffView.js";
import { CommentBox, CommentCard } from "./ReviewComments.js";

/**
 * One changed file's diff to review (a chunk of its own, loaded when a file is opened): a click or a tap on a line
 * opens a comment box under it; saved comments show under their lines, those on lines the diff no longer shows above it.
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
  const [composing, setComposing] = useState<LineAnchor | null>(null);
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
          pick: (row) => setComposing(anchorOf(row)),
          below: (row) => {
            const anchor = anchorOf(row);
            if (!anchor) return null;
            const here = placed.byRow.get(anchorKey(anchor)) ?? [];
            const open = composing !== null && anchorKey(composing) === anchorKey(anchor);
            if (here.length === 0 && !open) return null;
            return (
              <div class="review-thread">
                {here.map(card)}
                {open ? (
                  <CommentBox
                    label={`Comment on ${anchorWords(file.path, anchor)}`}
                    onSave={async (body) => {
                      await onAdd({ path: file.path, ...anchor, body });
                      // This box, if still open: one opened while it saved (on another line, or this one again) stays.
                      setComposing((now) => (now === composing ? null : now));
                    }}
                    onCancel={() => setComposing(null)}
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
