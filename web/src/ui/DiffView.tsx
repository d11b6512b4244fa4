import { useMemo, useState } from "preact/hooks";
import { lineDiff } from "../content/line-diff.js";

/** Lines shown before "show all": a rewritten file must not make one huge row. */
const SHOWN_LINES = 400;

/** A file change as a coloured line diff, with the file's name and what changed. */
export function DiffView({ path, oldText, newText }: { path: string; oldText: string | null; newText: string }) {
  const diff = useMemo(() => lineDiff(oldText, newText), [oldText, newText]);
  const [all, setAll] = useState(false);
  const lines = all ? diff.lines : diff.lines.slice(0, SHOWN_LINES);
  return (
    <figure class="diff">
      <figcaption>
        <span class="path">{path}</span>
        <span class="diff-stat">
          {oldText === null ? <span class="badge ok">new file</span> : null} <span class="added">+{diff.added}</span>{" "}
          <span class="removed">−{diff.removed}</span>
        </span>
      </figcaption>
      <div class="diff-lines">
        {lines.map((line, i) => (
          <div key={i} class={`diff-line ${line.kind}`}>
            <span class="ln">{line.oldLine ?? ""}</span>
            <span class="ln">{line.newLine ?? ""}</span>
            <span class="code">
              <span class="diff-sign" aria-hidden="true">
                {line.kind === "add" ? "+" : line.kind === "del" ? "-" : " "}
              </span>
              {line.text}
            </span>
          </div>
        ))}
      </div>
      {diff.lines.length > lines.length ? (
        <button type="button" class="quiet show-all" onClick={() => setAll(true)}>
          Show all {diff.lines.length} lines
        </button>
      ) : null}
    </figure>
  );
}
