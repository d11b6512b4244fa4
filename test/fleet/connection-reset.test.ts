// A connection to PostgreSQL reset just as it starts (a server stopping, a failover): the statement it was opened for
// fails with the connection's error, which its caller handles, and nothing else fails where no one hears it. The
// client library fetched the server's array types first on every new connection, from a promise nobody awaited: a
// reset during that query was an unhandled rejection, which a fleet host logs as an error.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { type Forward, SocketProxy } from "../support/socket-proxy.js";

const postgres = usePostgresCluster();
let proxy: SocketProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/**
 * The first connection is reset (RST) when the client sends its first statement after startup and authentication,
 * which is not passed on; later connections pass everything both ways.
 */
const resetFirstStatement: Forward = (near, far, connection) => {
  if (connection > 1) return void near.pipe(far);
  const statement = new FirstStatement();
  near.on("data", (chunk: Buffer) => {
    const at = statement.findIn(chunk);
    if (at < 0) return void far.write(chunk);
    far.write(chunk.subarray(0, at));
    near.resetAndDestroy();
    far.destroy();
  });
};

/** Where a client's first query (simple `Q` or extended `P`) starts in what it sends, after its startup message. */
class FirstStatement {
  private sent = Buffer.alloc(0);
  /** Where the next message starts in `sent`. */
  private next = 0;
  private startedUp = false;

  /** The offset in `chunk` of the first statement's first byte, or -1 while it has not come. */
  findIn(chunk: Buffer): number {
    const before = this.sent.length;
    this.sent = Buffer.concat([this.sent, chunk]);
    for (;;) {
      if (!this.startedUp) {
        // The startup message has no type byte: its length comes first.
        if (this.sent.length < this.next + 4) return -1;
        this.next += this.sent.readUInt32BE(this.next);
        this.startedUp = true;
        continue;
      }
      if (this.sent.length < this.next + 1) return -1;
      const type = String.fromCharCode(this.sent[this.next]!);
      if (type === "Q" || type === "P") return this.next - before;
      if (this.sent.length < this.next + 5) return -1;
      this.next += 1 + this.sent.readUInt32BE(this.next + 1);
    }
  }
}

describe("a connection to PostgreSQL reset as it starts", () => {
  it("fails the statement it was opened for with the reset, leaves no rejection unhandled, and the next statement connects again", async () => {
    const storeUrl = new URL(await postgres.freshDatabase());
    proxy = await SocketProxy.open(join(storeUrl.searchParams.get("host")!, ".s.PGSQL.5432"), "loopback", resetFirstStatement);
    const viaProxy = new URL(`postgres://127.0.0.1:${proxy.port}${storeUrl.pathname}`);
    viaProxy.username = storeUrl.username;
    const unhandled: unknown[] = [];
    const heard = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", heard);
    const sql = connect(viaProxy.toString(), { max: 1 });
    try {
      await expect(sql`SELECT 1 AS one`).rejects.toMatchObject({ code: expect.stringMatching(/^(ECONNRESET|EPIPE)$/) });
      // A second connection's round trips: a rejection left unhandled by the first is reported before they end.
      const texts = ["plain", "", 'a "quoted" word', "back\\slash", "{braces}, commas", "NULL", null, "ünïcode ✓"];
      const rows = await sql<{ text: string | null }[]>`SELECT text FROM unnest(${texts}::text[]) WITH ORDINALITY AS t (text, n) ORDER BY n`;
      expect(rows.map((row) => row.text)).toEqual(texts);
      const numbers = [0, -1, null, Number.MAX_SAFE_INTEGER];
      const counted = await sql<{ n: number | null }[]>`SELECT n FROM unnest(${numbers}::int8[]) WITH ORDINALITY AS t (n, o) ORDER BY o`;
      expect(counted.map((row) => row.n)).toEqual(numbers);
      // Refused, as the client refuses it, rather than stored as the word.
      await expect(sql`SELECT unnest(${["a", undefined as unknown as string]}::text[])`).rejects.toThrow(/an array parameter holds undefined/);
      expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", heard);
      await sql.end({ timeout: 5 });
    }
  });
});
