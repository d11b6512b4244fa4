import { ApiError } from "../api/api-error.js";
import { errorWords } from "../util/error-words.js";

/** Why a land did not happen, as the Land dialog shows it. */
export type LandRefusal =
  /** The project's check ran and failed: its output says why. */
  | { readonly name: "check-failed"; readonly output: string }
  /** The branch does not merge cleanly into its base: these files conflict. */
  | { readonly name: "conflict"; readonly files: readonly string[] }
  | { readonly name: "refused"; readonly message: string };

/** Reads a refused land (409 `check_failed` with the output, 409 `merge_conflict` naming files, or anything else). */
export function landRefusal(error: unknown): LandRefusal {
  if (error instanceof ApiError && error.code === "check_failed") {
    const output = error.body.output;
    return { name: "check-failed", output: typeof output === "string" ? output : "" };
  }
  if (error instanceof ApiError && error.code === "merge_conflict") {
    const files = error.body.files;
    return { name: "conflict", files: Array.isArray(files) ? files.filter((file): file is string => typeof file === "string") : [] };
  }
  return { name: "refused", message: errorWords(error) };
}

/** The prompt that asks the agent to resolve a conflict with its base, naming the files. */
export function resolvePrompt(base: string, files: readonly string[]): string {
  const named = files.length === 0 ? "" : ` These files conflict: ${files.join(", ")}.`;
  return `Landing this branch into ${base} failed with merge conflicts.${named} Please merge ${base} into this branch, resolve the conflicts, make sure the check passes, and commit.`;
}
