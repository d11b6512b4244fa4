import { CodedError } from "../protocol/coded-error.js";

/** Why a session's changes cannot be read or a file of them shown. */
export type ChangesRefusal = "not_a_git_repository" | "invalid_path" | "path_not_in_changes";

/** A refusal the REST and CLI edges report as it is named (docs/review.md). */
export class ChangesError extends CodedError<ChangesRefusal> {
  override readonly name = "ChangesError";
}
