import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteBackend } from "../../src/store/sqlite-backend.js";
import { storeContract, type ContractDatabase } from "./contract.js";

const HOST_TTL_MS = 30_000;
const dirs = new Map<ContractDatabase, string>();

storeContract(
  "SQLite (the one writer's batch applier and the synchronous reads, behind the asynchronous interface)",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-contract-"));
    const path = join(dir, "berth.db");
    // Heartbeats on a clock the test moves: one host per file, so silence is this clock passing.
    let now = Date.UTC(2025, 0, 1);
    const options = { hostTtlMs: HOST_TTL_MS, now: () => now };
    const db: ContractDatabase = {
      backend: SqliteBackend.open(path, options),
      client: async () => SqliteBackend.open(path, options),
      silence: async () => {
        now += HOST_TTL_MS + 1;
      },
      fleet: false,
    };
    dirs.set(db, dir);
    return db;
  },
  async (db) => {
    await db.backend.close();
    rmSync(dirs.get(db)!, { recursive: true, force: true });
    dirs.delete(db);
  },
);
