import { useEffect, useRef, useState } from "preact/hooks";
import type { ReviewComment } from "../api/types.js";
import { errorWords } from "../util/error-words.js";

type Saving = { readonly name: "editing" } | { readonly name: "saving" } | { readonly name: "failed"; readonly message: string };

/**
 * A comment's text box: Save (or Ctrl/⌘+Enter) keeps it, Cancel (or Escape) gives up. It has the focus as it opens,
 * and says why a save failed, keeping the text.
 */
export function CommentBox({
  label,
  initial = "",
  onSave,
  onCancel,
}: {
  /** What the box is for, read by a screen reader ("Comment on a.txt:12"). */
  label: string;
  initial?: string;
  onSave: (body: string) => Promise<void>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState(initial);
  const [saving, setSaving] = useState<Saving>({ name: "editing" });
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => box.current?.focus(), []);
  const save = (): void => {
    if (draft.trim() === "" || saving.name === "saving") return;
    setSaving({ name: "saving" });
    onSave(draft.trim()).then(
      () => undefined,
      (error: unknown) => setSaving({ name: "failed", message: errorWords(error) }),
    );
  };
  return (
    <form
      class="comment-box"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <textarea
        ref={box}
        aria-label={label}
        rows={3}
        value={draft}
        placeholder="Say what the agent should change here"
        onInput={(event) => setDraft(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === "Escape") {
            event.preventDefault();
            // A save under way is not taken back: its end would close a box opened on this line after it.
            if (saving.name !== "saving") onCancel();
          } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            save();
          }
        }}
      />
      {saving.name === "failed" ? (
        <p class="error" role="alert">
          Not saved: {saving.message}
        </p>
      ) : null}
      <div class="comment-actions">
        <button type="button" disabled={saving.name === "saving"} onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={draft.trim() === "" || saving.name === "saving"}>
          {saving.name === "saving" ? "Saving…" : "Save comment"}
        </button>
      </div>
    </form>
  );
}

/** A saved comment: its text, and Edit and Delete until it is sent; a sent one says so and stays as it was. */
export function CommentCard({
  comment,
  where,
  onEdit,
  onDelete,
}: {
  comment: ReviewComment;
  /** The comment's line, for labels ("a.txt:12"). */
  where: string;
  onEdit: (body: string) => Promise<void>;
  onDelete: () => Promise<void>;
}) {
  const [mode, setMode] = useState<"showing" | "editing" | "deleting">("showing");
  const [failure, setFailure] = useState<string | null>(null);
  if (mode === "editing") {
    return (
      <CommentBox
        label={`Edit the comment on ${where}`}
        initial={comment.body}
        onSave={async (body) => {
          await onEdit(body);
          setMode("showing");
        }}
        onCancel={() => setMode("showing")}
      />
    );
  }
  const remove = (): void => {
    setMode("deleting");
    setFailure(null);
    onDelete().catch((error: unknown) => {
      setMode("showing");
      setFailure(errorWords(error));
    });
  };
  return (
    <article class={comment.sentAt === null ? "comment" : "comment sent"} aria-label={`Comment on ${where}`}>
      <p class="comment-body">{comment.body}</p>
      {failure === null ? null : (
        <p class="error" role="alert">
          Not deleted: {failure}
        </p>
      )}
      <div class="comment-actions">
        {comment.sentAt === null ? (
          <>
            <span class="badge">not sent yet</span>
            <button type="button" class="quiet" onClick={() => setMode("editing")} aria-label={`Edit the comment on ${where}`}>
              Edit
            </button>
            <button type="button" class="danger quiet" disabled={mode === "deleting"} onClick={remove} aria-label={`Delete the comment on ${where}`}>
              {mode === "deleting" ? "Deleting…" : "Delete"}
            </button>
          </>
        ) : (
          <span class="badge ok">sent to the agent</span>
        )}
      </div>
    </article>
  );
}
