import { type ComponentChildren, Fragment } from "preact";
import { useMemo, useState } from "preact/hooks";
import { type DiffLine, type LineDiff, lineDiff } from "../content/line-diff.js";

/** Lines shown before "show all": a rewritten file must not make one huge row. */
const SHOWN_LINES = 400;

/** A review's hold on the diff: rows a person may pick (to comment on), and what shows under a row (its comments). */
export interface DiffReview {
  /** The label of a row's pick button ("Comment on a.txt:12"); null: the row cannot be picked (a hunk's header). */
  readonly pickLabel: (row: DiffLine) => string | null;
  readonly pick: (row: DiffLine) => void;
  readonly below: (row: DiffLine) => ComponentChildren;
  /** The diff of `oldText` and `newText`, as the review made it to place its comments (made once, not twice). */
  readonly diff: LineDiff;
}

/** A file change as a coloured line diff, with the file's name and what changed. */
export function DiffView({ path, oldText, newText, review }: { path: string; oldText: string | null; newText: string; review?: DiffReview }) {
  const made = review?.diff;
  const diff = useMemo(() => made ?? lineDiff(oldText, newText), [made, oldText, newText]);
  const [all, setAll] = useState(false);
  const lines = all ? diff.lines : diff.lines.slice(0, SHOWN_LINES);
  return (
    <figure class={review ? "diff reviewable" : "diff"}>
      <figcaption>
        <span class="path">{path}</span>
        <span class="diff-stat">
          {oldText === null ? <span class="badge ok">new file</span> : null} <span class="added">+{diff.added}</span>{" "}
          <span class="removed">−{diff.removed}</span>
        </span>
      </figcaption>
      <div class="diff-lines">
        {lines.map((line, i) => {
          const pickLabel = review?.pickLabel(line) ?? null;
          return (
            <Fragment key={i}>
              <div class={`diff-line ${line.kind}`}>
                {/* The whole row is the button (stretched over it): a click or a tap anywhere on the line picks it. */}
                {pickLabel === null ? null : <button type="button" class="pick-line" aria-label={pickLabel} onClick={() => review?.pick(line)} />}
                <span class="ln">{line.oldLine ?? ""}</span>
                <span class="ln">{line.newLine ?? ""}</span>
                <span class="code">
                  <span class="diff-sign" aria-hidden="true">
                    {line.kind === "add" ? "+" : line.kind === "del" ? "-" : " "}
                  </span>
                  {line.text}
                </span>
              </div>
              {review?.below(line)}
            </Fragment>
          );
        })}
      </div>
      {diff.lines.length > lines.length ? (
        <button type="button" class="quiet show-all" onClick={() => setAll(true)}>
          Show all {diff.lines.length} lines
        </button>
      ) : null}
    </figure>
  );
}
