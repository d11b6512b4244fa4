#!/usr/bin/env node
/** `npm run bench`: every benchmark, figures printed. */
import { runFleetDirectoryBench } from "./fleet-directory-bench.js";
import { runFleetRelayBench } from "./fleet-relay-bench.js";
import { runHostBench } from "./host-bench.js";
import { runJournalBench } from "./journal-bench.js";
import { runJournalRowBench } from "./journal-row-bench.js";
import { runStoreBackendBench } from "./store-backend-bench.js";
import { runLifecycleBench } from "./lifecycle-bench.js";
import { runLoadCurvesBench } from "./load-curves-bench.js";
import { runPackageBench } from "./package-bench.js";
import { runRelayBench } from "./relay-bench.js";
import { runSessionListBench } from "./session-list-bench.js";
import { runStartupBench } from "./startup-bench.js";
import { runTranscriptBench } from "./transcript-bench.js";
import { runOutsideLockBench, runWriteStallBench } from "./write-stall-bench.js";

console.log(`Berth benchmarks — node ${process.version}, ${new Date().toISOString()}`);
await runStartupBench();
await runLifecycleBench();
await runJournalBench();
await runStoreBackendBench();
await runHostBench();
await runSessionListBench();
await runWriteStallBench();
await runOutsideLockBench();
await runRelayBench();
await runJournalRowBench();
await runLoadCurvesBench();
await runFleetRelayBench();
await runFleetDirectoryBench();
await runTranscriptBench();
await runPackageBench();
