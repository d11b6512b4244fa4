import { RequestError } from "@agentclientprotocol/sdk";

/** `/fail <code> <message>`: `session/prompt` fails with exactly that error, to show error codes and data pass through. */
export function fail(code: number, message: string): never {
  throw new RequestError(code, message, { "berth-demo/reason": message });
}
