import type { HostRecord } from "../api/types.js";
import { locationName, shortId } from "../util/format.js";

export type RecordTone = "ok" | "warn" | "danger" | "info" | "muted";

export function recordSessionId(record: HostRecord): string | null {
  return "sessionId" in record ? record.sessionId : null;
}

/** How a record reads in the feed beyond its message: the fields that say what and why. */
export function recordDetails(record: HostRecord, titleOf: (sessionId: string) => string): string {
  const session = (id: string): string => titleOf(id) || `session ${shortId(id)}`;
  switch (record.kind) {
    case "location_booted":
      return locationName(record.directory, record.workspace);
    case "location_evicted":
      return `${locationName(record.directory, record.workspace)} · reason: ${record.reason}`;
    case "location_kept":
      return `${locationName(record.directory, record.workspace)} · ${record.reason.replace("_", " ")}`;
    case "session_interrupted":
      return `${session(record.sessionId)} · reason: ${record.reason}`;
    case "child_acquired":
      return `${session(record.sessionId)} · ${record.agent} · pid ${record.pid} · started in ${record.ms} ms`;
    case "child_released":
      return `${session(record.sessionId)} · pid ${record.pid} · ${record.why}`;
    case "child_exited":
      return `${session(record.sessionId)} · pid ${record.pid} · ${record.exit}`;
    case "acquisition_failed":
      return `${session(record.sessionId)} · ${record.error}`;
    case "turn_started":
      return session(record.sessionId);
    case "turn_ended":
      return `${session(record.sessionId)} · ${record.error ?? record.stopReason ?? "ended"}`;
    case "question_asked":
      return `${session(record.sessionId)} · ${record.questionKind}`;
    case "question_answered":
      return session(record.sessionId);
    case "question_cancelled":
      return `${session(record.sessionId)} · ${record.reason}`;
    case "group_reaped":
      return `${record.label} · group ${record.pgid} · ${record.outcome}`;
    case "session_deleted":
      return session(record.sessionId);
    case "session_lost":
      return `${session(record.sessionId)} · now on ${record.owner ?? "no host"}`;
    case "session_adopted":
      return `${session(record.sessionId)} · from ${record.from ?? "no host"} · epoch ${record.epoch}`;
    case "agent_asked":
      return `${record.agent} · ${record.method} · pid ${record.pid}`;
    case "file_request":
      return `${session(record.sessionId)} · ${record.method} ${record.path} · ${fileAnswer(record)}`;
  }
}

function fileAnswer(record: Extract<HostRecord, { kind: "file_request" }>): string {
  const why = record.why?.replace("_", " ") ?? "fallback";
  switch (record.by) {
    case "client":
      return "the editor answered";
    case "disk":
      return `the disk answered (${why})`;
    case "none":
      return `not written, the agent was told (${why})`;
  }
}

const tones: Record<HostRecord["kind"], RecordTone> = {
  location_booted: "ok",
  location_evicted: "warn",
  location_kept: "info",
  session_interrupted: "danger",
  child_acquired: "ok",
  child_released: "muted",
  child_exited: "danger",
  acquisition_failed: "danger",
  turn_started: "info",
  turn_ended: "muted",
  question_asked: "warn",
  question_answered: "ok",
  question_cancelled: "muted",
  group_reaped: "warn",
  session_deleted: "muted",
  session_lost: "warn",
  session_adopted: "info",
  agent_asked: "info",
  file_request: "muted",
};

export function recordTone(record: HostRecord): RecordTone {
  return tones[record.kind] ?? "muted";
}
