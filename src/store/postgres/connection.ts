import { userInfo } from "node:os";
import postgres from "postgres";
import { redactUrl } from "../../config/store-url.js";
import { StoreOpenError } from "../errors.js";
import { passfilePassword, type PassfileKey } from "./passfile.js";

/**
 * A pool, with int8 read as numbers. Arrays go only one way, as parameters cast to `text[]` or `int8[]`
 * (`${values}::text[]`): the client knows no other array type (see `arrayLiteral`), and none is read back.
 */
export type Sql = postgres.Sql<{ bigint: number }>;
/** One transaction of the pool. */
export type Transaction = postgres.TransactionSql<{ bigint: number }>;

/**
 * Bounds on what one connection may hold (docs/fleet.md, "The client library"): a statement that runs or waits on a lock
 * longer than this is cancelled (a lease being given up while waiting on a session's row is tried again at the next heartbeat), and a
 * transaction left idle (a host frozen in the middle of one) is ended by the server, its locks released.
 */
const STATEMENT_TIMEOUT_MS = 60_000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

/** int8 (seqs, epochs, millisecond timestamps, counts) as JS numbers: every value Berth stores is below 2^53. */
const bigintAsNumber = { to: 20, from: [20], serialize: (value: number) => String(value), parse: (text: string) => Number(text) };

/**
 * The array parameters Berth sends (`${values}::text[]`, `::int8[]`), as PostgreSQL's array literal: each element quoted
 * (NULL for null), `\` and `"` escaped. The client library learns these from the server's catalog on every new connection
 * instead (`fetch_types`), from a promise nobody awaits: a connection lost during that query (a server stopping) was an
 * unhandled rejection.
 */
function arrayLiteral(values: readonly (string | number | null)[]): string {
  return `{${values.map(arrayElement).join(",")}}`;
}

function arrayElement(value: string | number | null): string {
  // What the client itself refuses; as text it would be stored as the word.
  if (value === undefined) throw new TypeError("an array parameter holds undefined");
  return value === null ? "NULL" : `"${String(value).replace(/[\\"]/g, "\\$&")}"`;
}

/** A type the client serialises as an array literal. Berth reads no arrays back: `from` is empty, and `parse` (the client's type asks for one) never runs. */
const arrayParameter = (oid: number) => ({ to: oid, from: [] as number[], serialize: arrayLiteral, parse: (text: string) => text });

export interface ConnectOptions {
  /** Connections in the pool (default 10). */
  readonly max?: number;
}

/**
 * A connection pool for a `postgres://` or `postgresql://` URL. Besides what the client reads
 * from a URL, libpq's `host` query parameter is honoured, so a unix socket's directory can be
 * named the way `psql` takes it: `postgres://me@localhost/berth?host=/var/run/postgresql`. A URL without a
 * password takes it from `PGPASSWORD` (the client reads it) or else the passfile, as libpq does
 * (`~/.pgpass`, or `PGPASSFILE`): a password on `berth serve`'s command line would be in `ps` for every user.
 */
export function connect(url: string, options: ConnectOptions = {}): Sql {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreOpenError(`store URL ${redactUrl(url)} is not a URL (expected postgres://user@host:port/database)`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new StoreOpenError(`store URL ${redactUrl(url)} is not a postgres:// URL`);
  }
  // Choosing among servers by their state runs a query on each new connection from a promise the client library never
  // awaits, as its array-type fetch did (see `arrayLiteral`): a connection lost then would be an unhandled rejection.
  if (parsed.searchParams.has("target_session_attrs") || process.env.PGTARGETSESSIONATTRS) {
    throw new StoreOpenError(
      `store URL ${redactUrl(url)}: target_session_attrs (or PGTARGETSESSIONATTRS) is not supported; name the server to write to`,
    );
  }
  const socketDir = parsed.searchParams.get("host");
  parsed.searchParams.delete("host");
  const password = parsed.password === "" && process.env.PGPASSWORD === undefined ? passfilePassword(passfileKey(parsed, socketDir)) : undefined;
  return postgres(parsed.toString(), {
    ...(socketDir ? { host: socketDir } : {}),
    ...(password !== undefined ? { password } : {}),
    max: options.max ?? 10,
    types: { bigint: bigintAsNumber, textArray: arrayParameter(1009), bigintArray: arrayParameter(1016) },
    fetch_types: false,
    // Server notices (e.g. "relation already exists, skipping") are not Berth's to print.
    onnotice: () => undefined,
    connection: {
      application_name: "berth",
      statement_timeout: STATEMENT_TIMEOUT_MS,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
  });
}

/**
 * `sql.begin(fn)`, except that a transaction whose connection was lost sends no ROLLBACK: the client library (postgres
 * 3.4.9) would write it on the closed connection from a `setImmediate`, where its socket is null, and the TypeError thrown
 * there would end the process. The server rolls back what it had of the transaction when the connection ends; the
 * transaction fails with the connection's error, as it would have.
 */
export function transaction<T>(sql: Sql, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  let lost: (error: unknown) => void = () => undefined;
  const connectionLost = new Promise<never>((_, reject) => (lost = reject));
  const committed = sql.begin((tx) =>
    fn(tx).catch((error: unknown) => {
      if (!isUnreachable(error)) throw error;
      lost(error);
      // Never settles: the library's ROLLBACK is never sent. `begin` itself fails once the connection closes.
      return new Promise<never>(() => undefined);
    }),
  );
  return Promise.race([committed as Promise<T>, connectionLost]);
}

/** The server could not be reached or answer (as opposed to refusing the data). */
export function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // ENOENT: a unix socket that is not there (the server is stopped). 57P0x: the server is shutting down or ended the session.
  return typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|ENOENT|ENOTFOUND|ETIMEDOUT|EPIPE|CONNECTION_|CONNECT_TIMEOUT|57P0)/.test(code);
}

/** The host, port, database and user a URL connects with, as the client fills them in, to look a passfile up. */
function passfileKey(url: URL, socketDir: string | null): PassfileKey {
  const user = decodeURIComponent(url.username) || process.env.PGUSER || userInfo().username;
  return {
    host: socketDir ?? (url.hostname || process.env.PGHOST || "localhost"),
    port: url.port || process.env.PGPORT || "5432",
    database: decodeURIComponent(url.pathname.slice(1)) || process.env.PGDATABASE || user,
    user,
  };
}
