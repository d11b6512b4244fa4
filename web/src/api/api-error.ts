/** A refused REST call, with the server's machine code and human message. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The refusal's whole JSON body: some carry more than their words (a failed check's output, conflicting files). */
    readonly body: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}
