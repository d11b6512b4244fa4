import { AgentProfileStore } from "./agent-profiles.js";
import { openDatabase, type OpenOptions, type SqliteDatabase } from "./database.js";
import { StoreInputError } from "./errors.js";
import { EventJournal } from "./events.js";
import { JournalEnds } from "./journal-ends.js";
import { LifecycleRecordLog } from "./lifecycle-records.js";
import { migrate } from "./migrations.js";
import { SqliteProcessGroupLedger } from "./process-groups.js";
import { QuestionStore } from "./questions.js";
import { ReviewCommentStore } from "./review-comments.js";
import { SessionStore } from "./sessions.js";
import { guardWrite } from "./write-guard.js";

/** Everything Berth persists, in one SQLite file. Synchronous: every call is one short SQLite transaction. */
export class Store {
  readonly sessions: SessionStore;
  readonly events: EventJournal;
  /** What a list shows of many sessions' journals, in one read. */
  readonly journalEnds: JournalEnds;
  readonly questions: QuestionStore;
  readonly reviewComments: ReviewCommentStore;
  readonly processGroups: SqliteProcessGroupLedger;
  readonly lifecycleRecords: LifecycleRecordLog;
  readonly agentProfiles: AgentProfileStore;
  readonly #db: SqliteDatabase;

  private constructor(db: SqliteDatabase) {
    this.#db = db;
    this.sessions = new SessionStore(db);
    this.events = new EventJournal(db);
    this.journalEnds = new JournalEnds(db, this.events);
    this.questions = new QuestionStore(db);
    this.reviewComments = new ReviewCommentStore(db);
    this.processGroups = new SqliteProcessGroupLedger(db);
    this.lifecycleRecords = new LifecycleRecordLog(db);
    this.agentProfiles = new AgentProfileStore(db);
  }

  /** Opens or creates the file and brings its schema up to date. */
  static open(path: string, options: OpenOptions = {}): Store {
    return Store.fromDatabase(openDatabase(path, options));
  }

  /** Composes a store over a database opened with `openDatabase`, migrating it; the store now owns it. */
  static fromDatabase(db: SqliteDatabase): Store {
    try {
      guardWrite("store.migrate", () => migrate(db));
      return new Store(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  get path(): string {
    return this.#db.name;
  }

  /**
   * Runs `work` as one write transaction: every write inside it is stored, or none is. Nests. It takes the
   * write lock up front (IMMEDIATE), so another connection's lock is waited for, not a deadlock.
   * `work` must be synchronous; a failure inside it rolls back and is rethrown.
   */
  transaction<T>(work: () => T): T {
    return guardWrite("store.transaction", () =>
      this.#db
        .transaction(() => {
          const result = work();
          if (result instanceof Promise) {
            throw new StoreInputError("store.transaction", "work must be synchronous, it returned a promise");
          }
          return result;
        })
        .immediate(),
    );
  }

  /** Idempotent. */
  close(): void {
    this.#db.close();
  }
}
