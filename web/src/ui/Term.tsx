import type { Words } from "./plain-words.js";

/** A plain label that tells, on hover, the design's term for it. */
export function Term({ words }: { words: Words }) {
  return (
    <span class="term" title={words.term}>
      {words.plain}
    </span>
  );
}
