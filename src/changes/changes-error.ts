/** Why a session's changes cannot be read or a file of them shown. */
export type ChangesRefusal = "not_a_git_repository" | "invalid_path" | "path_not_in_changes";

/** A refusal the REST and CLI edges report as it is named (docs/review.md). */
export class ChangesError extends Error {
  override readonly name = "ChangesError";
  constructor(
    readonly code: ChangesRefusal,
    message: string,
  ) {
    super(message);
  }
}
