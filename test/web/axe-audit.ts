import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

const axeScript = fileURLToPath(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url));

export interface Finding {
  readonly view: string;
  readonly id: string;
  readonly impact: string;
  readonly targets: string[];
}

/** axe's serious and critical violations on the page as it is now, and a page without its one h1 (only "moderate" to axe). */
export async function audit(page: Page, view: string): Promise<Finding[]> {
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.addScriptTag({ path: axeScript });
  const violations = (await page.evaluate(
    "window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })))",
  )) as { id: string; impact: string | null; targets: string[] }[];
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical" || violation.id === "page-has-heading-one")
    .map((violation) => ({ view, id: violation.id, impact: violation.impact!, targets: violation.targets }));
}
