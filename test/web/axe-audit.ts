import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

const axeScript = fileURLToPath(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url));

export interface Finding {
  readonly view: string;
  readonly id: string;
  readonly impact: string;
  readonly targets: string[];
}

/**
 * axe's options turning off every rule that cannot report what `audit` keeps. axe gives each of a violation's checks
 * its rule's `impact` (`finalizeRuleResult`), so a rule rated minor or moderate never reports a serious or critical
 * violation: skipping it finds the same, sooner. page-has-heading-one (moderate) stays. A rule without an impact
 * would break that reasoning: the audit fails rather than skip it.
 */
const onlyRulesKept = `(() => {
  const rules = window.axe._audit.rules;
  const unrated = rules.filter((rule) => !rule.impact).map((rule) => rule.id);
  if (unrated.length > 0) throw new Error('axe rules without an impact: ' + unrated.join(', '));
  const skipped = rules.filter((rule) => rule.impact !== 'serious' && rule.impact !== 'critical' && rule.id !== 'page-has-heading-one');
  return Object.fromEntries(skipped.map((rule) => [rule.id, { enabled: false }]));
})()`;

/** axe's serious and critical violations on the page as it is now, and a page without its one h1 (only "moderate" to axe). */
export async function audit(page: Page, view: string): Promise<Finding[]> {
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.addScriptTag({ path: axeScript });
  const violations = (await page.evaluate(
    `window.axe.run(document, { resultTypes: ['violations'], rules: ${onlyRulesKept} }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })))`,
  )) as { id: string; impact: string | null; targets: string[] }[];
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical" || violation.id === "page-has-heading-one")
    .map((violation) => ({ view, id: violation.id, impact: violation.impact!, targets: violation.targets }));
}
