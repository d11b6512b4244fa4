import { readFileSync } from "node:fs";

/** Berth's package.json (one level above both `src/` and `dist/`): its name on the registry and its version. */
export const berthPackage = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { name: string; version: string };

export const berthVersion: string = berthPackage.version;
