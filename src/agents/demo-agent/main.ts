#!/usr/bin/env node
// Berth's bundled ACP agent. stdout carries the protocol; diagnostics go to stderr.
import { createDemoAgentApp, demoAgentName } from "./app.js";
import { type DemoAgentCliOptions, demoAgentUsage, parseDemoAgentOptions } from "./cli-options.js";
import { recordingStream } from "./recording-stream.js";
import { stdioStream } from "./stdio-stream.js";

/** Exit code for bad command-line arguments. */
const usageExitCode = 2;

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(`${demoAgentUsage}\n`);
  process.exit(0);
}

let options: DemoAgentCliOptions;
try {
  options = parseDemoAgentOptions(argv, process.env);
} catch (error) {
  process.stderr.write(`${demoAgentName}: ${(error as Error).message}\n${demoAgentUsage}\n`);
  process.exit(usageExitCode);
}

const stdio = stdioStream(options.batchWrites);
const stream = options.recordFile ? recordingStream(stdio, options.recordFile) : stdio;
const writeLine = (line: string) => void process.stdout.write(line);
const connection = createDemoAgentApp({ ...options, env: process.env, writeLine }).connect(stream);
process.stderr.write(
  `${demoAgentName}: serving ACP on stdio, state in ${options.stateDir}` +
    (options.recordFile ? `, recording to ${options.recordFile}` : "") +
    (options.requireAuth ? ", authentication required" : "") +
    "\n",
);
// The client closing stdin ends the agent, even with a turn still sleeping.
await connection.closed;
process.exit(0);
