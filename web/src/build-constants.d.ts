/** Replaced at build time by `web/vite.config.ts`. */
declare const __BERTH_VERSION__: string;

/** A stylesheet imported for its effect: Vite puts it in the chunk that imports it (xterm's, with the login terminal). */
declare module "*.css";
