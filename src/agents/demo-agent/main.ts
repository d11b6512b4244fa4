#!/usr/bin/env node
// Berth's bundled ACP agent. stdout carries the protocol; diagnostics go to stderr.
import { createDemoAgentApp, demoAgentName } from "./app.js";
import { demoAgentUsage, parseDemoAgentOptions } from "./cli-options.js";
import { stdioStream } from "./stdio-stream.js";

/** Exit code for bad command-line arguments. */
const usageExitCode = 2;

let options;
try {
  options = parseDemoAgentOptions(process.argv.slice(2), process.env);
} catch (error) {
  process.stderr.write(`${demoAgentName}: ${(error as Error).message}\n${demoAgentUsage}\n`);
  process.exit(usageExitCode);
}

const connection = createDemoAgentApp(options).connect(stdioStream());
process.stderr.write(`${demoAgentName}: serving ACP on stdio, state in ${options.stateDir}\n`);
// The client closing stdin ends the agent, even with a turn still sleeping.
await connection.closed;
process.exit(0);
