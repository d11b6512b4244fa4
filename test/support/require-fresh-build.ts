import { fileURLToPath } from "node:url";
import { staleBuildMessage } from "./build-freshness.js";

/** vitest's globalSetup (vitest.config.ts): no test starts while dist/ is older than its sources. */
export default function requireFreshBuild(): void {
  const message = staleBuildMessage(fileURLToPath(new URL("../../", import.meta.url)));
  if (message !== undefined) throw new Error(message);
}
