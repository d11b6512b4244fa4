import postgres from "postgres";
import { redactUrl } from "../../config/store-url.js";
import { StoreOpenError } from "../errors.js";

/** A pool, with int8 read as numbers. */
export type Sql = postgres.Sql<{ bigint: number }>;
/** One transaction of the pool. */
export type Transaction = postgres.TransactionSql<{ bigint: number }>;

/** int8 (seqs, epochs, millisecond timestamps, counts) as JS numbers: every value Berth stores is below 2^53. */
const bigintAsNumber = { to: 20, from: [20], serialize: (value: number) => String(value), parse: (text: string) => Number(text) };

export interface ConnectOptions {
  /** Connections in the pool (default 10). */
  readonly max?: number;
}

/**
 * A connection pool for a `postgres://` or `postgresql://` URL. Besides what the client reads
 * from a URL, libpq's `host` query parameter is honoured, so a unix socket's directory can be
 * named the way `psql` takes it: `postgres://me@localhost/berth?host=/var/run/postgresql`.
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
  const socketDir = parsed.searchParams.get("host");
  parsed.searchParams.delete("host");
  return postgres(parsed.toString(), {
    ...(socketDir ? { host: socketDir } : {}),
    max: options.max ?? 10,
    types: { bigint: bigintAsNumber },
    // Server notices (e.g. "relation already exists, skipping") are not Berth's to print.
    onnotice: () => undefined,
    connection: { application_name: "berth" },
  });
}
