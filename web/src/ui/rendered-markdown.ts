import { markdownHtml } from "../content/markdown.js";

/** Rendered blocks of finished text, by row key: a block never changes, so it is rendered once. */
const blocks = new Map<string, string>();
/** The last rendering of each growing tail, so a frame without new text renders nothing. */
const tails = new Map<string, { source: string; html: string }>();
/** Bounds the cache of a very long conversation (the least recently added go first). */
const MAX_BLOCKS = 2_000;

export function blockHtml(key: string, source: string): string {
  let html = blocks.get(key);
  if (html === undefined) {
    html = markdownHtml(source);
    blocks.set(key, html);
    if (blocks.size > MAX_BLOCKS) blocks.delete(blocks.keys().next().value!);
  }
  return html;
}

export function tailHtml(key: string, source: string): string {
  const cached = tails.get(key);
  if (cached?.source === source) return cached.html;
  const html = markdownHtml(source);
  tails.set(key, { source, html });
  return html;
}

/** Forgets every rendering (the highlighter arrived: code renders differently now). */
export function forgetRenderings(): void {
  blocks.clear();
  tails.clear();
}
