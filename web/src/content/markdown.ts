import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";
import { highlighted, whenHighlighterLoads } from "./highlight-loader.js";

/**
 * Agent text is untrusted: it may carry `<script>`, event attributes or `javascript:` links, on
 * purpose or by quoting a web page. Markdown is rendered to HTML by marked and every result goes
 * through DOMPurify before it reaches the page (the page's CSP blocks inline scripts as well).
 */
const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      const language = (lang ?? "").match(/^\S*/)?.[0] ?? "";
      const body = highlighted(text, language) ?? escapeHtml(text);
      const label = language ? ` data-lang="${escapeHtml(language)}"` : "";
      return `<pre class="code"${label}><code>${body}\n</code></pre>\n`;
    },
  },
});

// Links open in a new tab, and tell the target nothing of this page.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

const purifyOptions = {
  // Forms and inputs in agent text could pose as Berth's own controls.
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
  FORBID_ATTR: ["style"],
};

/** Markdown as safe HTML. */
export function markdownHtml(source: string): string {
  return DOMPurify.sanitize(marked.parse(source) as string, purifyOptions);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export { whenHighlighterLoads };
