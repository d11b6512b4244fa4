import { appendFileSync } from "node:fs";
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";

type Direction = "in" | "out";

/**
 * Wraps a transport so every JSON-RPC message, as it crossed the wire, is
 * appended to `file` as `{"pid":...,"direction":"in"|"out","message":...}` before it is
 * handled or sent (several processes may record to one file: the pid tells them apart).
 * Synchronous appends: once a response is seen, its line is there.
 */
export function recordingStream(inner: Stream, file: string): Stream {
  const record = (direction: Direction) =>
    new TransformStream<AnyMessage, AnyMessage>({
      transform(message, controller) {
        appendFileSync(file, `${JSON.stringify({ pid: process.pid, direction, message })}\n`, { mode: 0o600 });
        controller.enqueue(message);
      },
    });
  const incoming = record("in");
  const outgoing = record("out");
  // pipeTo passes close and errors on to the other side; its promise only repeats them.
  void inner.readable.pipeTo(incoming.writable).catch(() => undefined);
  void outgoing.readable.pipeTo(inner.writable).catch(() => undefined);
  return { readable: incoming.readable, writable: outgoing.writable };
}
