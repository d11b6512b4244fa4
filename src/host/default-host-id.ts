import { setTimeout as sleep } from "node:timers/promises";
import type { StoreBackend } from "../store/store-backend.js";
import type { Logger } from "./logger.js";

/** How often the registration under this machine's name is read while waiting to see whether a host runs under it. */
const POLL_MS = 250;

/** Another `berth serve` heartbeats under the host id this one would take by default. */
class HostIdInUseError extends Error {
  override readonly name = "HostIdInUseError";
}

/**
 * With no `fleet.hostId`, the host id is this machine's name, which a second `berth serve` on the machine (another data
 * directory) takes too: registering under it would silently supersede the first process. So a host under the default id
 * does not register while another process under it heartbeats: it watches the id's heartbeat until it moves (refused,
 * naming `--host-id`) or ages past that host's TTL (the process is gone: a restart after a stop or a crash waits that
 * long). A host given its id explicitly takes it over at once, as a supervisor restarting it means to.
 */
export async function ensureDefaultIdFree(backend: Pick<StoreBackend, "listHosts">, id: string, log: Logger, pollMs = POLL_MS): Promise<void> {
  const read = async () => (await backend.listHosts()).find((host) => host.id === id);
  const first = await read();
  if (!first?.alive) return;
  log.info(
    { hostId: id, heartbeatAt: new Date(first.heartbeatAt).toISOString(), url: first.url },
    "a host under this machine's name heartbeated within its TTL: waiting to see whether it still runs (--host-id gives this host an id of its own)",
  );
  for (;;) {
    await sleep(pollMs);
    const now = await read();
    if (!now?.alive) return;
    if (now.heartbeatAt !== first.heartbeatAt || now.incarnation !== first.incarnation) {
      const where = now.url === null ? "" : ` at ${now.url}`;
      throw new HostIdInUseError(
        `another berth serve${where} runs under the host id "${id}" (this machine's name, the default) and heartbeats: ` +
          `give this one an id of its own with --host-id <id> (or fleet.hostId in the configuration)`,
      );
    }
  }
}
