import { pino, type Logger } from "pino";
import pretty from "pino-pretty";

export type { Logger };

/** Structured JSON lines; pretty-printed when stderr is a terminal. */
export function createLogger(options: { level?: string; pretty?: boolean } = {}): Logger {
  const level = options.level ?? process.env.BERTH_LOG_LEVEL ?? "info";
  const usePretty = options.pretty ?? process.stderr.isTTY === true;
  const base = { level, base: { name: "berth" }, timestamp: pino.stdTimeFunctions.isoTime };
  return usePretty ? pino(base, pretty({ destination: 2, colorize: true, ignore: "pid,hostname,name" })) : pino(base, pino.destination(2));
}

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
