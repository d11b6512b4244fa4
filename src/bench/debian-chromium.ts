/**
 * How every browser of Berth's tools runs (tests, benchmarks, the docs' screenshots): Debian's
 * Chromium, headless, with nothing of its own reaching the network; never a downloaded browser.
 */
export const chromiumPath = "/usr/bin/chromium";

export const chromiumArgs: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
