import type { AnyMessage } from "@agentclientprotocol/sdk";
// JSON-RPC's "Internal error": the bridge itself could not do what it is for.
import { INTERNAL_ERROR } from "../protocol/json-rpc-codes.js";

/** Editors send `initialize` as soon as they start their agent; a parent silent this long is not waiting for an answer. */
const FIRST_MESSAGE_WAIT_MS = 5_000;

/**
 * An editor that launched `berth connect` as its agent shows what its `initialize` gets, not the bridge's stderr:
 * the first message it sends, if a request, is answered with `message` as a JSON-RPC error. Then stdin is let go,
 * so the bridge can exit. A parent that sends nothing within a few seconds (a supervisor holding the pipe open) is not
 * waited for.
 */
export async function refuseFirstRequest(
  local: { readonly readable: ReadableStream<AnyMessage>; readonly writable: WritableStream<AnyMessage> },
  message: string,
  data: Record<string, unknown>,
): Promise<void> {
  const reader = local.readable.getReader();
  try {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<{ done: true; value: undefined }>((resolve) => {
      timer = setTimeout(() => resolve({ done: true, value: undefined }), FIRST_MESSAGE_WAIT_MS);
    });
    const first = await Promise.race([reader.read(), silent]).finally(() => clearTimeout(timer));
    if (first.done || !("method" in first.value) || !("id" in first.value)) return;
    const writer = local.writable.getWriter();
    // Settles once the line is written: the process may then end.
    await writer.write({ jsonrpc: "2.0", id: first.value.id, error: { code: INTERNAL_ERROR, message, data } });
    writer.releaseLock();
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
