import { useState } from "preact/hooks";
import type { SessionView } from "../api/types.js";
import { baseWords, totalsText } from "../review/change-words.js";
import { type OpenFile, useChangedFile } from "../review/changed-file.js";
import { type SessionReview, useSessionReview } from "../review/session-review.js";
import { errorWords } from "../util/error-words.js";
import { shortId } from "../util/format.js";
import { ChangedFileList } from "./ChangedFileList.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { LandDialog } from "./LandDialog.js";
import { resolvePrompt } from "../review/land-outcome.js";
import { changesHref, sessionHref } from "./route.js";
import { WorktreeBar } from "./WorktreeBar.js";
import { useDialogs } from "./use-dialogs.js";

type Sending =
  | { readonly name: "idle" }
  | { readonly name: "sending" }
  | { readonly name: "sent"; readonly count: number }
  | { readonly name: "failed"; readonly message: string };

type Dialog = { readonly name: "land" } | { readonly name: "discard" };

/**
 * `#/sessions/<id>/changes[/<path>]`: what a session changed, file by file, each file's diff read when it is opened,
 * kept current as the agent edits; comments on its lines, sent to the agent as one prompt; Land and Discard for a
 * session in a worktree of its own. A phone shows the list, then the file.
 */
export function ChangesView({
  sessionId,
  path,
  session,
  onLand,
  onDiscard,
  onAskAgent,
}: {
  sessionId: string;
  /** The open file, or null for the list alone. */
  path: string | null;
  /** As the overview knows it (its title, its running turn, its worktree). */
  session: SessionView | undefined;
  onLand: (message: string) => Promise<void>;
  onDiscard: () => Promise<void>;
  /** Sends the agent a prompt, as the conversation's message box does. */
  onAskAgent: (text: string) => Promise<void>;
}) {
  const worktree = session?.worktree ?? null;
  // A landed or discarded worktree is gone: its changes are in the base now, or nowhere.
  const closed = worktree !== null && worktree.state !== "active";
  const review = useSessionReview(sessionId, !closed);
  const open = useChangedFile(sessionId, closed ? null : path, review.revision);
  const [sending, setSending] = useState<Sending>({ name: "idle" });
  const dialogs = useDialogs<Dialog>();
  const dialog = dialogs.shown;
  const title = session?.title ?? `Untitled session ${shortId(sessionId)}`;
  const comments = review.comments ?? [];
  const unsent = comments.filter((comment) => comment.sentAt === null).length;

  const send = (): void => {
    setSending({ name: "sending" });
    review.sendComments().then(
      () => setSending({ name: "sent", count: unsent }),
      (error: unknown) => setSending({ name: "failed", message: errorWords(error) }),
    );
  };

  return (
    <section class={path === null ? "changes sheet panel showing-list" : "changes sheet panel showing-file"} aria-labelledby="changes-title">
      <header class="changes-head sheet-head">
        <div class="chat-title">
          <h2 id="changes-title">Changes: {title}</h2>
          <p class="meta">
            <a href={sessionHref(sessionId)} class="conversation-link">
              ← Conversation
            </a>
            {session?.turnActive ? <span class="badge info">the agent is working</span> : null}
            {review.changes.name === "loaded" ? (
              <>
                {" · "}
                {totalsText(review.changes.changes.totals)} against <span class="path">{baseWords(review.changes.changes.base)}</span>
              </>
            ) : null}
          </p>
        </div>
        {worktree ? (
          <WorktreeBar worktree={worktree} onLand={() => dialogs.open({ name: "land" })} onDiscard={() => dialogs.open({ name: "discard" })} />
        ) : null}
      </header>
      {closed ? (
        <p class="empty">
          {worktree.state === "landed"
            ? `These changes are in ${worktree.base} now; the worktree was removed. The check's output is in the conversation.`
            : "These changes were thrown away with their worktree and branch."}
        </p>
      ) : (
        <ChangesBody sessionId={sessionId} path={path} review={review} open={open} cwd={session?.cwd} />
      )}
      {closed ? null : (
        <footer class="send-bar">
          <SendStatus sending={sending} sessionId={sessionId} />
          {unsent === 0 ? null : (
            <button type="button" class="primary" disabled={sending.name === "sending"} onClick={send}>
              {sending.name === "sending" ? "Sending…" : `Send ${unsent} ${unsent === 1 ? "comment" : "comments"} to the agent`}
            </button>
          )}
        </footer>
      )}
      {dialog.name === "land" && worktree ? (
        <LandDialog
          branch={worktree.branch}
          base={worktree.base}
          defaultMessage={session?.title ?? ""}
          onLand={onLand}
          onAskAgent={(files) => onAskAgent(resolvePrompt(worktree.base, files))}
          onClose={() => dialogs.close(dialog)}
        />
      ) : null}
      {dialog.name === "discard" && worktree ? (
        <ConfirmDialog
          title="Discard these changes?"
          body={`The branch ${worktree.branch} and its worktree are deleted with everything the agent changed in them; ${worktree.base} stays as it is. This cannot be undone.`}
          confirmLabel="Discard changes"
          workingLabel="Discarding…"
          onConfirm={onDiscard}
          onClose={() => dialogs.close(dialog)}
        />
      ) : null}
    </section>
  );
}

function ChangesBody({
  sessionId,
  path,
  review,
  open,
  cwd,
}: {
  sessionId: string;
  path: string | null;
  review: SessionReview;
  open: OpenFile;
  cwd: string | undefined;
}) {
  const { changes } = review;
  if (changes.name === "loading")
    return (
      <p class="status" role="status">
        Reading the changes…
      </p>
    );
  if (changes.name === "not-a-repository")
    return (
      <p class="empty">
        {cwd ? <span class="path">{cwd}</span> : "This session's directory"} is not in a git repository, so Berth has nothing to compare it with:
        there are no changes to show.
      </p>
    );
  if (changes.name === "failed")
    return (
      <p class="error" role="alert">
        The changes could not be read: {changes.message}
      </p>
    );
  const { files } = changes.changes;
  const comments = review.comments ?? [];
  return (
    <div class="changes-body">
      <nav class="changes-files" aria-label="Changed files">
        {files.length === 0 ? (
          <p class="empty">Nothing changed yet against {changes.changes.base}.</p>
        ) : (
          <ChangedFileList sessionId={sessionId} files={files} openPath={path} comments={comments} />
        )}
      </nav>
      <div class="changes-file">
        {path === null ? null : (
          <a class="back-to-files" href={changesHref(sessionId)}>
            ← All files
          </a>
        )}
        <OpenFileView path={path} open={open} review={review} />
      </div>
    </div>
  );
}

function OpenFileView({ path, open, review }: { path: string | null; open: OpenFile; review: SessionReview }) {
  switch (open.name) {
    case "none":
      return <p class="empty">Choose a file to see its diff and comment on its lines.</p>;
    case "loading":
      return (
        <p class="status" role="status">
          Reading {path}…
        </p>
      );
    case "unchanged":
      return <p class="empty">{path} has no changes any more.</p>;
    case "failed":
      return (
        <p class="error" role="alert">
          {path} could not be read: {open.message}
        </p>
      );
    case "loaded": {
      const { file, view: FileReview } = open;
      if (file.binary) return <p class="empty">{file.path} is a binary file: its content is not shown.</p>;
      return (
        <>
          {file.cut ? <p class="meta">This file is large: its diff is shown up to {Math.round(file.cut.limitBytes / 1024)} KiB.</p> : null}
          <FileReview
            file={file}
            comments={(review.comments ?? []).filter((comment) => comment.path === file.path)}
            onAdd={review.addComment}
            onEdit={review.editComment}
            onDelete={review.deleteComment}
          />
        </>
      );
    }
  }
}

function SendStatus({ sending, sessionId }: { sending: Sending; sessionId: string }) {
  if (sending.name === "failed")
    return (
      <p class="error" role="alert">
        Not sent: {sending.message}
      </p>
    );
  if (sending.name === "sent")
    return (
      <p class="status" role="status">
        Sent {sending.count} {sending.count === 1 ? "comment" : "comments"} to the agent as one message: its turn shows in the{" "}
        <a href={sessionHref(sessionId)}>conversation</a>.
      </p>
    );
  return <p class="meta">Click or tap a line to comment on it.</p>;
}
