import { createRequire } from "node:module";
import { pino, type Logger } from "pino";
import type PinoPretty from "pino-pretty";

export type { Logger };

/** Structured JSON lines; pretty-printed when stderr is a terminal. */
export function createLogger(options: { level?: string; pretty?: boolean } = {}): Logger {
  const level = options.level ?? "info";
  const usePretty = options.pretty ?? process.stderr.isTTY === true;
  const base = { level, base: { name: "berth" }, timestamp: pino.stdTimeFunctions.isoTime };
  return usePretty ? pino(base, prettyStream({ destination: 2, colorize: true, ignore: "pid,hostname,name" })) : pino(base, pino.destination(2));
}

// Loaded only for a terminal: a service, and every test, writes JSON lines and need not load its dozen modules at start.
function prettyStream(options: PinoPretty.PrettyOptions): PinoPretty.PrettyStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  return pretty(options);
}

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
