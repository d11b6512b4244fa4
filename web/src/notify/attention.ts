/** What waits for the person: questions unanswered, turns that ended while they looked elsewhere. */
export interface Attention {
  readonly questions: number;
  readonly turnsEnded: number;
}

const BASE_TITLE = "Berth";

/** The tab's title: `(2) 1 question waiting, 1 turn ended — Berth`, or just `Berth`. */
export function pageTitle({ questions, turnsEnded }: Attention): string {
  const parts: string[] = [];
  if (questions > 0) parts.push(`${questions} ${questions === 1 ? "question" : "questions"} waiting`);
  if (turnsEnded > 0) parts.push(`${turnsEnded} ${turnsEnded === 1 ? "turn" : "turns"} ended`);
  return parts.length === 0 ? BASE_TITLE : `(${questions + turnsEnded}) ${parts.join(", ")} — ${BASE_TITLE}`;
}

/**
 * The favicon: Berth's mark (the page's own `icon.svg`), with a badge counting what waits (red for a question, green for
 * a finished turn only). An SVG data URL, which the page's CSP allows (`img-src 'self' data:`).
 */
export function faviconHref({ questions, turnsEnded }: Attention): string {
  const count = questions + turnsEnded;
  if (count === 0) return "icon.svg";
  const mark = "<rect width='32' height='32' rx='8' fill='%232f6fde'/><path d='M8 20h16v4H8z' fill='white'/>";
  const label = count > 9 ? "9+" : String(count);
  const fill = questions > 0 ? "%23d92d20" : "%23179c52";
  const badge =
    `<circle cx='23' cy='9' r='9' fill='${fill}' stroke='white' stroke-width='2'/>` +
    `<text x='23' y='13' font-family='sans-serif' font-size='${label.length > 1 ? 9 : 12}' font-weight='700' text-anchor='middle' fill='white'>${label}</text>`;
  return svg(mark + badge);
}

function svg(body: string): string {
  return `data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E${body.replaceAll("<", "%3C").replaceAll(">", "%3E")}%3C/svg%3E`;
}
