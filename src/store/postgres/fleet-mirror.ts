import { rmSync } from "node:fs";
import { createDatabaseFile } from "../../config/paths.js";
import { openDatabase } from "../database.js";
import type { Session } from "../sessions.js";
import type { Lease, StoreBackend } from "../store-backend.js";
import { Store } from "../store.js";
import { BatchApplier, callOp, flatten, type WriteOp } from "../write-batch.js";

/** Records copied into a new mirror: the most the REST API lists at once. */
const RECORDS_COPIED = 1_000;
/** Events per mirror transaction while copying a journal. */
const EVENTS_PER_BATCH = 1_000;

/**
 * Builds this host's mirror afresh from the shared store (docs/fleet.md): a SQLite file in the
 * data directory, with the same schema as the embedded store, that the host reads synchronously
 * and its fleet writer keeps up to date. It holds the sessions this host owns (the `leases`)
 * with their journals and questions, this host's process groups, the newest lifecycle records
 * of the fleet and the agent profiles of `agents`. Done before the host starts: no writer is
 * running yet, so the copy is written here directly.
 */
export async function buildMirror(
  backend: StoreBackend,
  hostId: string,
  path: string,
  leases: readonly Lease[],
  agents: readonly string[],
): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  // Other local users must not read the sessions' journals: 0600 like the embedded store's file.
  createDatabaseFile(path);
  // Created with the embedded store's schema (its migrations), then filled through the one writer's ops.
  Store.open(path).close();
  const db = openDatabase(path);
  try {
    const applier = new BatchApplier(db);
    const apply = (units: WriteOp[][]) => {
      if (units.length === 0) return;
      const { failed } = applier.apply(flatten(units));
      if (failed.length > 0) throw new Error(`building the mirror ${path} failed: ${failed[0]!.error}`);
    };
    for (const lease of leases) {
      const session = await backend.getSession(lease.sessionId);
      if (!session) continue;
      for await (const units of sessionCopy(backend, session)) apply(units);
    }
    apply((await backend.listGroups(hostId)).map((group) => [callOp("processGroups.add", [group])]));
    apply(
      (await backend.recentRecords(RECORDS_COPIED)).map((record) => [["r", record.id, record.kind, JSON.stringify(record.payload), record.at, null]]),
    );
    for (const agent of agents) {
      const profile = await backend.getAgentProfile(agent);
      if (profile) apply([[callOp("agentProfiles.put", [profile])]]);
    }
  } finally {
    db.close();
  }
}

/**
 * A session as the mirror stores it, copied from the shared store in runs of units: its row, its journal (at most
 * {@link EVENTS_PER_BATCH} events a run) its review comments, and its questions, each with its state. Written as the one writer's ops, so
 * a new mirror (before the host starts) and an adopting host's running writer store it alike.
 */
export async function* sessionCopy(backend: StoreBackend, session: Session): AsyncGenerator<WriteOp[][]> {
  const { agentState, title, updatedAt, ...created } = session;
  yield [
    [
      callOp("sessions.create", [{ ...created, agentRequest: created.agentRequest as object | null, worktree: created.worktree as object | null }]),
      ...(agentState === null ? [] : [callOp("sessions.setAgentState", [session.id, agentState as object])]),
      ...(title === null ? [] : [callOp("sessions.setTitle", [session.id, title])]),
      ["t", session.id, updatedAt, null, null, null] as const,
    ],
  ];
  let events: WriteOp[][] = [];
  for await (const event of backend.replay(session.id)) {
    events.push([["e", session.id, event.seq, event.kind, JSON.stringify(event.payload), event.at]]);
    if (events.length >= EVENTS_PER_BATCH) {
      yield events;
      events = [];
    }
  }
  if (events.length > 0) yield events;
  const comments = await backend.listReviewComments(session.id);
  if (comments.length > 0)
    yield comments.map(({ sentAt, ...comment }) => [
      callOp("reviewComments.add", [comment]),
      ...(sentAt === null ? [] : [callOp("reviewComments.markSent", [[comment.id], sentAt])]),
    ]);
  const questions = await backend.listQuestions(session.id);
  if (questions.length === 0) return;
  yield questions.map((question) => [
    ["q", question.id, session.id, question.kind, JSON.stringify(question.request), question.askedAt],
    ...(question.state === "pending"
      ? []
      : [
          callOp("questions.resolve", [
            question.id,
            question.state,
            question.state === "answered" ? question.answer : question.reason,
            question.resolvedAt!,
          ]),
        ]),
  ]);
}
