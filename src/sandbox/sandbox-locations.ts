import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { expandHome } from "../config/paths.js";

/**
 * The configured location (`sandbox.locations`) a session's directory lies in: the longest whose directory is it or
 * holds it, compared by real paths (a symlinked `~/work` still matches); undefined when none does.
 */
export function matchingLocation<Layer>(
  locations: Readonly<Record<string, Layer>>,
  directory: string,
  home: string,
): { readonly key: string; readonly layer: Layer } | undefined {
  // Without locations there is nothing to compare: no real path to read (a list asks for each session older than sandboxes).
  if (Object.keys(locations).length === 0) return undefined;
  const place = realOrResolved(directory);
  let best: { key: string; layer: Layer; length: number } | undefined;
  for (const [key, layer] of Object.entries(locations)) {
    const root = realOrResolved(expandHome(key, home));
    const holds = root === "/" || place === root || place.startsWith(`${root}/`);
    if (holds && (best === undefined || root.length > best.length)) best = { key, layer, length: root.length };
  }
  return best && { key: best.key, layer: best.layer };
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
