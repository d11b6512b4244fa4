import type { LifecycleRecord } from "../lifecycle/lifecycle-records.js";
import { recordMessages } from "../lifecycle/lifecycle-records.js";

/** Records the host adds to the kernel's: children, turns, questions, reaping. */
type HostOnlyRecord =
  | { readonly kind: "child_acquired"; readonly sessionId: string; readonly agent: string; readonly pid: number; readonly ms: number }
  | {
      readonly kind: "child_released";
      readonly sessionId: string;
      readonly pid: number;
      readonly why: "grace" | "evicted" | "deleted" | "shutdown" | "unresponsive";
    }
  | { readonly kind: "child_exited"; readonly sessionId: string; readonly pid: number; readonly exit: string }
  | { readonly kind: "acquisition_failed"; readonly sessionId: string; readonly error: string }
  | { readonly kind: "turn_started"; readonly sessionId: string }
  | { readonly kind: "turn_ended"; readonly sessionId: string; readonly stopReason: string | null; readonly error: string | null }
  | { readonly kind: "question_asked"; readonly sessionId: string; readonly questionId: string; readonly questionKind: string }
  | { readonly kind: "question_answered"; readonly sessionId: string; readonly questionId: string }
  | { readonly kind: "question_cancelled"; readonly sessionId: string; readonly questionId: string; readonly reason: string }
  | { readonly kind: "group_reaped"; readonly pgid: number; readonly label: string; readonly outcome: string }
  | { readonly kind: "session_deleted"; readonly sessionId: string }
  | {
      readonly kind: "agent_asked";
      readonly agent: string;
      readonly pid: number;
      readonly purpose: "initialize" | "authenticate" | "request";
      readonly method: string;
    };

export type HostRecord = LifecycleRecord | HostOnlyRecord;

const hostMessages: Readonly<Record<HostOnlyRecord["kind"], string>> = {
  child_acquired: "agent child acquired",
  child_released: "agent child released",
  child_exited: "agent child exited unexpectedly",
  acquisition_failed: "agent child acquisition failed",
  turn_started: "turn started",
  turn_ended: "turn ended",
  question_asked: "question asked",
  question_answered: "question answered",
  question_cancelled: "question cancelled",
  group_reaped: "leftover process group reaped",
  session_deleted: "session deleted",
  agent_asked: "agent started for one request outside any session",
};

/** The one log line's text for each record. */
export function messageOf(record: HostRecord): string {
  return record.kind in recordMessages ? recordMessages[record.kind as LifecycleRecord["kind"]] : hostMessages[record.kind as HostOnlyRecord["kind"]];
}

/** A record as it is logged, journaled and streamed: its fields, its message, its time. */
export interface StampedRecord {
  readonly id: number;
  readonly at: number;
  readonly message: string;
  readonly record: HostRecord;
}
