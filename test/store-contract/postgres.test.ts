import { connect } from "../../src/store/postgres/connection.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import type { StoreBackend } from "../../src/store/store-backend.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { storeContract, type ContractDatabase } from "./contract.js";

const HOST_TTL_MS = 30_000;
const postgres = usePostgresCluster();
const clients = new Map<ContractDatabase, StoreBackend[]>();

storeContract(
  "PostgreSQL (a real throwaway cluster)",
  async () => {
    const url = await postgres.freshDatabase();
    const opened: StoreBackend[] = [];
    const open = async () => {
      const backend = await PostgresBackend.open(url, { hostTtlMs: HOST_TTL_MS, maxConnections: 4 });
      opened.push(backend);
      return backend;
    };
    const db: ContractDatabase = {
      backend: await open(),
      client: open,
      // The server's clock is the fleet's: the host's last heartbeat is moved back past the TTL.
      silence: async (hostId) => {
        const admin = connect(url, { max: 1 });
        try {
          await admin`UPDATE hosts SET heartbeat_at = heartbeat_at - ${HOST_TTL_MS + 1_000} * interval '1 millisecond' WHERE id = ${hostId}`;
        } finally {
          await admin.end();
        }
      },
      fleet: true,
    };
    clients.set(db, opened);
    return db;
  },
  async (db) => {
    // close() is idempotent: a test may have closed its own clients.
    for (const backend of clients.get(db) ?? []) await backend.close();
    clients.delete(db);
  },
);
