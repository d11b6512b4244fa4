// A remembered device as `GET /api/device-logins` lists it: the server keeps the logins, the dashboard shows them.

/** A remembered device as listed: never its secrets. */
export interface DeviceLoginView {
  readonly id: string;
  /** What the browser said it was when it was remembered ("Chrome on Android"). */
  readonly label: string;
  readonly createdAt: number;
  readonly lastUsedAt: number;
}
