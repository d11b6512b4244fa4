/** A bad flag, a bad configuration: nothing was started. */
export const USAGE_EXIT_CODE = 2;
/** Something went wrong while starting or running (port in use, data directory taken). */
export const FAILURE_EXIT_CODE = 1;
/** A second SIGINT/SIGTERM while stopping: out at once, as shells report an interrupted command. */
export const INTERRUPTED_EXIT_CODE = 130;

/** A mistake in how a command was called, reported on stderr with exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A failure the message explains (the host refused, a service manager is missing), reported on stderr with exit code 1. */
export class CommandFailedError extends Error {
  override readonly name: string = "CommandFailedError";
}
