/**
 * Code highlighting is loaded only when a fenced block names a language: the highlighter and its
 * grammars are a chunk of their own, so a conversation without code costs nothing for it.
 */
import { retriableImport } from "../chunk-import.js";

type Highlight = (code: string, language: string) => string | null;

/** Blocks longer than this are shown plain: highlighting them would hold up the page. */
const MAX_HIGHLIGHTED = 20_000;

const importHighlighter = retriableImport(() => import("./highlight.js"));
let highlight: Highlight | null = null;
let loading = false;
const loadedListeners = new Set<() => void>();

/** The block as highlighted HTML, or null (not loaded yet, no language, unknown language, too long). */
export function highlighted(code: string, language: string): string | null {
  if (!language || code.length > MAX_HIGHLIGHTED) return null;
  if (highlight) return highlight(code, language);
  if (loading) return null;
  loading = true;
  importHighlighter().then(
    (module) => {
      highlight = module.highlight;
      for (const listener of loadedListeners) listener();
    },
    // Not loaded (the host went away meanwhile): code stays plain, and the next block tries again.
    () => {
      loading = false;
    },
  );
  return null;
}

/** Calls `listener` once the highlighter has loaded (views then render their code again). */
export function whenHighlighterLoads(listener: () => void): () => void {
  loadedListeners.add(listener);
  return () => loadedListeners.delete(listener);
}
