export { openDatabase, type OpenOptions, type SqliteDatabase } from "./database.js";
export { StoreInputError, StoreNotFoundError, StoreOpenError, StoreWriteError } from "./errors.js";
export type { JournalEvent, ReadOptions, ReplayOptions, EventJournal } from "./events.js";
export type { Json } from "./input.js";
export type { LifecycleRecord, LifecycleRecordLog } from "./lifecycle-records.js";
export { latestSchemaVersion } from "./migrations.js";
export type { SqliteProcessGroupLedger } from "./process-groups.js";
export type {
  NewQuestion,
  Question,
  QuestionKind,
  QuestionOutcome,
  QuestionState,
  QuestionStore,
} from "./questions.js";
export type { NewSession, Session, SessionStore } from "./sessions.js";
export { Store } from "./store.js";
