/** Replaced at build time by `web/vite.config.ts`. */
declare const __BERTH_VERSION__: string;
