import type { ServiceDefinition } from "./service-definition.js";

/** One platform's service manager as `berth service` drives it: systemd's user manager, or launchd. */
export interface ServiceManager {
  /** What it is called in messages: "systemd user unit", "launchd agent". */
  readonly kind: string;
  /** The unit or plist `install` writes. */
  readonly file: string;
  render(service: ServiceDefinition): string;
  /** Whether the manager can be talked to from here, or a sentence saying why not and what to do. */
  reachable(): true | string;
  /** Loads the written file, enables and starts the service; `changed`: a different file ran before, restart it. */
  start(changed: boolean): void;
  /** Stops and disables the service, removing the file with `removeFile` before the manager forgets it. */
  stop(removeFile: () => void): void;
  /** What the manager says of the service: enabled, running, its last lines. */
  status(): string[];
  /** What to do next, printed after `install`. */
  readonly hints: readonly string[];
}
