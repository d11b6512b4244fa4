// Renders the dashboard's app icons (web/public/*.png) from their SVG in Debian's Chromium:
// `node scripts/make-icons.mjs`. The PNGs are committed; run this again only to change them.
import { writeFileSync } from "node:fs";
import { chromium } from "playwright-core";

const blue = "#2f6fde";
/** Berth's mark: a berth line across a blue square. `padding` keeps a maskable icon's mark in its safe zone. */
const svg = ({ rounded, padding }) => {
  const inner = 32 - 2 * padding;
  const scale = inner / 32;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="100%" height="100%">
    <rect width="32" height="32" rx="${rounded ? 8 : 0}" fill="${blue}"/>
    <g transform="translate(${padding} ${padding}) scale(${scale})"><path d="M8 20h16v4H8z" fill="#fff"/></g>
  </svg>`;
};
const icons = [
  { file: "icon-192.png", size: 192, rounded: true, padding: 0 },
  { file: "icon-512.png", size: 512, rounded: true, padding: 0 },
  { file: "icon-maskable-512.png", size: 512, rounded: false, padding: 5 },
  { file: "apple-touch-icon.png", size: 180, rounded: false, padding: 0 },
];

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu"] });
try {
  for (const icon of icons) {
    const page = await browser.newPage({ viewport: { width: icon.size, height: icon.size } });
    await page.setContent(`<body style="margin:0;background:transparent">${svg(icon)}</body>`);
    writeFileSync(new URL(`../web/public/${icon.file}`, import.meta.url), await page.screenshot({ omitBackground: true }));
    await page.close();
  }
} finally {
  await browser.close();
}
