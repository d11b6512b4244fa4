/**
 * A refusal or failure named by a machine code (e.g. `path_not_in_changes`), which the REST and CLI edges report as it is
 * named, beside its message. Each kind of error is a subclass naming its codes and its `name`.
 */
export class CodedError<Code extends string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
