/**
 * A streamed Markdown message, kept as blocks that no longer change plus a tail that still grows.
 * A block is cut off at a blank line outside any code fence, so each block parses on its own the
 * way it would in the whole text; every view renders a finished block once, and only the tail
 * again as chunks arrive. A tail with no such line (a huge paragraph or code block) is cut at a
 * line end once it is long, the open code fence closed and reopened around the cut; a single line
 * longer than that is cut where it reaches the limit.
 */
export interface Segments {
  readonly blocks: string[];
  tail: string;
  /** The tail length at which the next cut is tried (cuts are tried every {@link CUT_STEP} characters). */
  nextCut: number;
}

/** How far the tail grows between tries to cut it. */
export const CUT_STEP = 2_048;
/**
 * A tail this long is cut even without a blank line. The tail is parsed and laid out again as it grows,
 * once a frame: at 8 kB a 200,000-chunk reply had main-thread tasks of 100-130 ms, at 4 kB 53-56 ms
 * (`npm run bench`, docs/dashboard.md).
 */
export const HARD_LIMIT = 4_096;

export function emptySegments(): Segments {
  return { blocks: [], tail: "", nextCut: CUT_STEP };
}

export function appendSegment(segments: Segments, text: string): void {
  // A long text (chunks Berth merged) goes in as short chunks would: cut as it grows, the tail stays short.
  for (let at = 0; at < text.length; at += CUT_STEP) {
    segments.tail += text.slice(at, at + CUT_STEP);
    if (segments.tail.length < segments.nextCut) continue;
    cutWhileLong(segments);
    segments.nextCut = segments.tail.length + CUT_STEP;
  }
}

/** The whole text, blocks and tail (fences added at forced cuts included). */
export function segmentsText(segments: Segments): string {
  return segments.blocks.join("") + segments.tail;
}

interface Fence {
  readonly char: string;
  readonly length: number;
  readonly line: string;
}

const fencePattern = /^ {0,3}(`{3,}|~{3,})/;

/** Cuts the tail, and again while it is still past the limit (a blank line early in it) and each cut shortens it. */
function cutWhileLong(segments: Segments): void {
  let before = segments.tail.length;
  cut(segments);
  while (segments.tail.length >= HARD_LIMIT && segments.tail.length < before) {
    before = segments.tail.length;
    cut(segments);
  }
}

function cut(segments: Segments): void {
  const tail = segments.tail;
  let fence: Fence | null = null;
  let safe = 0;
  let lineStart = 0;
  for (let end = tail.indexOf("\n"); end >= 0; end = tail.indexOf("\n", lineStart)) {
    const line = tail.slice(lineStart, end);
    const marker = fencePattern.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence.char && marker.length >= fence.length && line.trim() === marker) fence = null;
    } else if (marker && !(marker[0] === "`" && line.slice(line.indexOf(marker) + marker.length).includes("`"))) {
      fence = { char: marker[0]!, length: marker.length, line };
    } else if (line.trim() === "") {
      safe = end + 1;
    }
    lineStart = end + 1;
  }
  if (safe > 0) {
    segments.blocks.push(tail.slice(0, safe));
    segments.tail = tail.slice(safe);
    return;
  }
  if (tail.length < HARD_LIMIT) return;
  if (lineStart > 0) {
    // `lineStart` is the start of the unfinished last line; `fence` is the state there.
    const head = tail.slice(0, lineStart);
    const rest = tail.slice(lineStart);
    if (fence) {
      segments.blocks.push(`${head}${fence.char.repeat(fence.length)}\n`);
      segments.tail = `${fence.line}\n${rest}`;
    } else {
      segments.blocks.push(head);
      segments.tail = rest;
    }
    return;
  }
  // One line longer than the limit: cut it, never inside a surrogate pair.
  let at = HARD_LIMIT;
  const code = tail.charCodeAt(at - 1);
  if (code >= 0xd800 && code <= 0xdbff) at--;
  segments.blocks.push(tail.slice(0, at));
  segments.tail = tail.slice(at);
}
