import type { InterruptReason } from "./executions.js";

/**
 * What the kernel reports about itself. The host turns each record into exactly one
 * log line (with `message` as its text), one journal row and one event for operators.
 */
export type LifecycleRecord =
  | {
      readonly kind: "location_booted";
      readonly directory: string;
      readonly workspace: string | undefined;
    }
  | {
      readonly kind: "location_evicted";
      readonly directory: string;
      readonly workspace: string | undefined;
      /** `idle`: its TTL ran out; `inactivity`: active executions hit the max active hold. */
      readonly reason: "idle" | "inactivity";
    }
  | {
      readonly kind: "location_kept";
      readonly directory: string;
      readonly workspace: string | undefined;
      /** Work was admitted while the capped location was being cleaned up. */
      readonly reason: "work_admitted";
    }
  | {
      readonly kind: "session_interrupted";
      readonly sessionId: string;
      readonly directory: string;
      readonly workspace: string | undefined;
      readonly reason: InterruptReason;
    };

export type LifecycleRecordKind = LifecycleRecord["kind"];

/** The human text of each record; `location services evicted` is the line operators grep for. */
export const recordMessages: Readonly<Record<LifecycleRecordKind, string>> = {
  location_booted: "location services booted",
  location_evicted: "location services evicted",
  location_kept: "location eviction cancelled: work admitted during cleanup",
  session_interrupted: "session interrupted",
};

export type RecordSink = (record: LifecycleRecord) => void;
