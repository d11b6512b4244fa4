import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";
import { highlighted, whenHighlighterLoads } from "./highlight-loader.js";
import { withBerthMarkup } from "./message-markup.js";

/**
 * Agent text is untrusted: it may carry `<script>`, event attributes or `javascript:` links, on
 * purpose or by quoting a web page, and HTML that poses as Berth's own controls (a link with the
 * class `button` reading "Allow once", an open `<dialog>` asking to sign in again). Markdown is
 * rendered to HTML by marked and every result goes through DOMPurify before it reaches the page
 * (the page's CSP blocks inline scripts as well): HTML only (no SVG or MathML), no interactive
 * element, no `id` or `style`, and no class but highlight.js's. Links stay links; the page asks
 * before it follows one (AgentLinkDialog). Berth's own markup (code bars, task boxes) is added after.
 */
const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      const language = (lang ?? "").match(/^\S*/)?.[0] ?? "";
      const body = highlighted(text, language) ?? escapeHtml(text);
      const label = language ? ` data-lang="${escapeHtml(language)}"` : "";
      return `<pre${label}><code>${body}\n</code></pre>\n`;
    },
    // The sanitizer takes every input out; a mark only this page knows stands for the box until Berth puts its own in.
    checkbox({ checked }: Tokens.Checkbox): string {
      return `<span data-task="${TASK_MARK}${checked ? "done" : "open"}"></span> `;
    },
  },
});

/** Drawn once per page: agent text cannot name it, so no box appears where the agent's Markdown had no task. */
const TASK_MARK = `berth-${Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join("")}-`;

// Links open in a new tab, and tell the target nothing of this page.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/**
 * The classes highlight.js puts on the code it highlights (before sanitizing: the block is made in
 * marked's renderer): `hljs-keyword`, `hljs-title function_` (a sub-scope), `language-ts`.
 */
const HIGHLIGHT_CLASS = /^(hljs(-[\w-]+)?|language-[\w-]+|[a-z]+_+)$/;

// A class is kept only on code and its spans, and only highlight.js's: none of Berth's own (`button`, `badge`, `modal`) can be borrowed.
DOMPurify.addHook("uponSanitizeAttribute", (node, data) => {
  if (data.attrName !== "class") return;
  const onCode = node.tagName === "SPAN" || node.tagName === "CODE";
  const classes = data.attrValue.split(/\s+/).filter(Boolean);
  if (!onCode || !classes.every((name) => HIGHLIGHT_CLASS.test(name))) data.keepAttr = false;
});

const purifyOptions = {
  USE_PROFILES: { html: true },
  // Interactive elements, and what opens a layer above the page, could pose as Berth's own controls or dialogs.
  FORBID_TAGS: [
    "style",
    "dialog",
    "form",
    "input",
    "button",
    "textarea",
    "select",
    "option",
    "optgroup",
    "datalist",
    "output",
    "label",
    "fieldset",
    "legend",
    "meter",
    "progress",
    "details",
    "summary",
    "menu",
    "menuitem",
    // An image map's areas are links no handler of links sees: a click on the picture would leave without the confirm step.
    "map",
    "area",
    // Not in DOMPurify's defaults either; named so that a change of its defaults cannot let them in.
    "iframe",
    "object",
    "embed",
    "template",
    "slot",
    "marquee",
  ],
  // `id` could clash with the page's own, `style` place text anywhere; the rest open layers, run commands or take focus.
  FORBID_ATTR: [
    "id",
    "style",
    "usemap",
    "ismap",
    "popover",
    "popovertarget",
    "popovertargetaction",
    "command",
    "commandfor",
    "tabindex",
    "draggable",
    "inert",
  ],
};

/** Markdown as safe HTML, with Berth's own markup added once sanitized (message-markup.ts). */
export function markdownHtml(source: string): string {
  const html = DOMPurify.sanitize(marked.parse(source) as string, purifyOptions);
  return html.includes("<pre") || html.includes(TASK_MARK) ? withBerthMarkup(html, TASK_MARK) : html;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export { whenHighlighterLoads };
