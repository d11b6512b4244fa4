/**
 * Markdown as the words a reader sees, line by line: headings, quotes, list markers and task boxes,
 * fences, emphasis, inline code's backticks, links' and images' addresses and HTML tags left out.
 * Titles and previews are plain text; shown as written, the marks would read as noise ("# Plan for `cart.ts`").
 * Titles (the host's) and previews (the store's) are made with it.
 */
export function plainText(markdown: string): string {
  return markdown
    .split("\n")
    .map(plainLine)
    .filter((line) => line !== null)
    .join("\n");
}

/** A fence's line, a table's separator row or a rule: nothing a reader reads. */
const MARKUP_ONLY = /^\s*(?:(?:```|~~~).*|(?=[^|]*\|)[\s|:-]*-[\s|:-]*|(?:[-*_]\s*){3,})$/;

function plainLine(line: string): string | null {
  if (MARKUP_ONLY.test(line)) return null;
  return (
    line
      .replace(/^\s{0,3}#{1,6}(?:\s+|$)/, "")
      .replace(/^\s*(?:>\s?)+/, "")
      .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/, "")
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<\/?[A-Za-z][^>]*>/g, "")
      .replace(/(`+)(.+?)\1/g, "$2")
      .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, "$2")
      .replace(/(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])/g, "$1")
      .replace(/(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)/g, "$1")
      .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "$1")
      // A table's row: its cells, apart.
      .replace(/^\s*\|(.*)\|\s*$/, (_row, cells: string) =>
        cells
          .split("|")
          .map((cell) => cell.trim())
          .join("  "),
      )
  );
}
