import type { ChangedFile, ReviewComment } from "../api/types.js";
import { statusLetter, statusWords } from "../review/change-words.js";
import { changesHref } from "./route.js";

/** The files a session changed, each a link to its diff: status letter, path, +/− counts, and its unsent comments. */
export function ChangedFileList({
  sessionId,
  files,
  openPath,
  comments,
}: {
  sessionId: string;
  files: readonly ChangedFile[];
  openPath: string | null;
  comments: readonly ReviewComment[];
}) {
  return (
    <ul class="changed-files">
      {files.map((file) => {
        const unsent = comments.filter((comment) => comment.path === file.path && comment.sentAt === null).length;
        return (
          <li key={file.path}>
            <a
              class={`changed-file row-link status-${file.status}`}
              href={changesHref(sessionId, file.path)}
              aria-current={file.path === openPath ? "page" : undefined}
            >
              <span class="status-letter" title={statusWords(file)} aria-hidden="true">
                {statusLetter(file.status)}
              </span>
              <span class="visually-hidden">{statusWords(file)}: </span>
              <span class="path">
                {file.path}
                {file.oldPath ? <span class="old-path"> (from {file.oldPath})</span> : null}
              </span>
              <span class="diff-stat">
                {file.binary ? (
                  "binary"
                ) : (
                  <>
                    <span class="added">+{file.added}</span> <span class="removed">−{file.removed}</span>
                  </>
                )}
              </span>
              {unsent === 0 ? null : (
                <span class="badge warn">
                  {unsent} {unsent === 1 ? "comment" : "comments"}
                </span>
              )}
            </a>
          </li>
        );
      })}
    </ul>
  );
}
