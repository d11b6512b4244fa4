import { Writable } from "node:stream";
import { pino } from "pino";

/** A logger whose JSON lines are kept, parsed, in `lines`. */
export function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: "info" }, sink), lines };
}
