const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The lifecycle knobs and their defaults, in milliseconds. */
export const lifecycleDefaults = {
  /** How long an unheld agent child is kept warm. */
  releaseGraceMs: 15 * SECOND,
  /** How long a location with no active execution is kept after its last durable event or settle. */
  idleTtlMs: 60 * MINUTE,
  /** How long active executions may keep a location alive with no durable event. */
  maxActiveHoldMs: 24 * HOUR,
  /** How often location retention is swept. */
  sweepIntervalMs: MINUTE,
} as const;
