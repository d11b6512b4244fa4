/** The holder that keeps a child that cannot be reloaded for as long as its location is retained. */
export const LOCATION_HOLDER = "berth:location";

/** Holders that are clients (connections, views, requests): not the host's own location holder, not turns. */
export function clientHolders(holds: { holderIds(sessionId: string): string[] }, sessionId: string): number {
  return holds.holderIds(sessionId).filter((id) => id !== LOCATION_HOLDER && !id.startsWith("turn:")).length;
}
