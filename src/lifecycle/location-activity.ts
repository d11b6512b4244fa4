/**
 * The retention arithmetic of one location. `activeAt` (the last durable event) and
 * `expiresAt` (the keep-alive deadline) are kept apart so that keep-alive by active
 * execution can never push the deadline past `activeAt + maxActiveHold`. Times are the clock's `elapsed()`, as
 * deadlines count: a step of the wall clock moves none of them.
 */
export interface LocationActivity {
  activeAt: number;
  expiresAt: number;
}

export interface RetentionWindows {
  readonly idleTtlMs: number;
  readonly maxActiveHoldMs: number;
}

export function freshActivity(now: number, windows: RetentionWindows): LocationActivity {
  return { activeAt: now, expiresAt: now + windows.idleTtlMs };
}

/** A durable event: progress was made, so the location gets a full idle TTL from now. */
export function touchActivity(activity: LocationActivity, now: number, windows: RetentionWindows): void {
  activity.activeAt = Math.max(activity.activeAt, now);
  activity.expiresAt = Math.max(activity.expiresAt, now + windows.idleTtlMs);
}

/** The latest moment keep-alive may extend the deadline to. */
export function capOf(activity: LocationActivity, windows: RetentionWindows): number {
  return activity.activeAt + windows.maxActiveHoldMs;
}

/** A sweep saw an active execution here: extend the deadline, but never past the cap. */
export function keepAlive(activity: LocationActivity, now: number, windows: RetentionWindows): void {
  activity.expiresAt = Math.max(activity.expiresAt, Math.min(now + windows.idleTtlMs, capOf(activity, windows)));
}

export function isExpired(activity: LocationActivity, now: number): boolean {
  return now >= activity.expiresAt;
}
