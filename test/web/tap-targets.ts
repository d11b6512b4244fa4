import type { Page } from "playwright-core";

/** A finger's width: the smallest tap target a phone should offer. */
export const TAP = 44;

/** The controls a finger taps: buttons, menus, fields, checkbox rows and links shown as buttons. */
const CONTROLS = "button, select, input:not([type='checkbox']), label.check, a.button";

/** Every control shown on the page (those `selector` finds) that a finger taps and that is smaller than a finger, named with its size. */
export async function tooSmallToTap(page: Page, selector = CONTROLS): Promise<Array<{ what: string; width: number; height: number }>> {
  const targets = page.locator(selector);
  const sizes: Array<{ what: string; width: number; height: number }> = [];
  for (const target of await targets.all()) {
    if (!(await target.isVisible())) continue;
    const box = await target.boundingBox();
    if (!box) continue;
    const what = (await target.getAttribute("aria-label")) ?? ((await target.textContent()) ?? "").trim();
    if (box.width < TAP || box.height < TAP) sizes.push({ what, width: Math.round(box.width), height: Math.round(box.height) });
  }
  return sizes;
}
