import { afterAll, beforeAll } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { startThrowawayCluster, type ThrowawayCluster } from "../../src/store/postgres/throwaway-cluster.js";

/**
 * One throwaway PostgreSQL cluster for a test file (`src/store/postgres/throwaway-cluster.ts`):
 * started before the file's tests as an unprivileged user in a temp directory, stopped and
 * removed after them. `freshDatabase()` gives each test an empty database of its own.
 */
export function usePostgresCluster() {
  let cluster: ThrowawayCluster | undefined;
  let databases = 0;

  beforeAll(async () => {
    // Durability off: this cluster dies with the test file.
    cluster = await startThrowawayCluster({ unsafeFast: true });
    if (process.env.BERTH_TEST_TIMINGS) console.log(`postgres ${cluster.version} cluster started in ${cluster.startMs.toFixed(0)} ms`);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const started = () => {
    if (!cluster) throw new Error("the PostgreSQL cluster is not started (call usePostgresCluster at the top of the file)");
    return cluster;
  };

  return {
    get cluster(): ThrowawayCluster {
      return started();
    },
    /** Creates an empty database and returns its URL. */
    async freshDatabase(): Promise<string> {
      const name = `test_${++databases}`;
      const admin = connect(started().url, { max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return started().urlOf(name);
    },
  };
}
