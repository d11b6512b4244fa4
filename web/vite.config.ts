import { defineConfig } from "vite";

// The dashboard is bundled at build time into dist/web and served by `berth serve`: no CDN, no network at run time.
export default defineConfig({
  root: new URL(".", import.meta.url).pathname,
  base: "./",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: new URL("../dist/web", import.meta.url).pathname,
    emptyOutDir: true,
  },
});
