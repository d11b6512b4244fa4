import type { SessionView } from "../../src/host/views.js";

/** A session view as a host shows (and streams) it: running a turn on `host`, its agent held by one client. */
export function sessionView(id: string, host: string, fields: Partial<SessionView> = {}): SessionView {
  return {
    id,
    host,
    hostOnline: true,
    agent: "demo",
    cwd: "/work",
    workspace: null,
    worktree: null,
    title: null,
    state: "live",
    pid: 4242,
    holders: 1,
    turnActive: true,
    turnStartedAt: 1_000,
    pendingQuestions: 0,
    releaseAt: null,
    preview: { role: "agent", text: "Sleeping for 10m", at: 1_001 },
    sandbox: null,
    lastTurn: null,
    createdAt: 900,
    updatedAt: 1_001,
    ...fields,
  };
}
