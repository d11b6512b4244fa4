import { Readable, Writable } from "node:stream";
import { ndJsonStream, type Stream } from "@agentclientprotocol/sdk";

/**
 * ACP over this process's stdin/stdout, one JSON-RPC message per line. `batched`: what is sent within two turns of the
 * event loop goes out in one write, so the client reads messages the agent sent one after another (a prompt's answer
 * and the first request for the prompt it queued) at once.
 */
export function stdioStream(batched = false): Stream {
  const stdout = batched ? batchedStdout() : (Writable.toWeb(process.stdout) as WritableStream<Uint8Array>);
  return ndJsonStream(stdout, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>);
}

function batchedStdout(): WritableStream<Uint8Array> {
  let pending: Uint8Array[] = [];
  const flush = () => {
    const batch = Buffer.concat(pending);
    pending = [];
    process.stdout.write(batch);
  };
  return new WritableStream<Uint8Array>({
    // Taken at once: the next message comes in this turn of the event loop, not after a write.
    write(chunk) {
      // Two turns: a queued prompt starts one turn after the answer to the prompt before it (turn.ts).
      if (pending.length === 0) setImmediate(() => setImmediate(flush));
      pending.push(chunk);
    },
    close() {
      if (pending.length > 0) flush();
    },
  });
}
