#!/usr/bin/env node
/** `npm run bench`: every benchmark, figures printed. */
import { runHostBench } from "./host-bench.js";
import { runJournalBench } from "./journal-bench.js";
import { runLifecycleBench } from "./lifecycle-bench.js";
import { runRelayBench } from "./relay-bench.js";
import { runTranscriptBench } from "./transcript-bench.js";
import { runWriteStallBench } from "./write-stall-bench.js";

console.log(`Berth benchmarks — node ${process.version}, ${new Date().toISOString()}`);
await runLifecycleBench();
await runJournalBench();
await runHostBench();
await runWriteStallBench();
await runRelayBench();
await runTranscriptBench();
