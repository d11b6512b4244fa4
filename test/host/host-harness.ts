import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import type { Clock } from "../../src/lifecycle/clock.js";
import { Host } from "../../src/host/host.js";
import type { SessionEvent } from "../../src/host/session-bus.js";

export { processIsRunning, waitUntil, waitUntilGone } from "../support/process-table.js";

export interface HostFixture {
  readonly host: Host;
  readonly dataDir: string;
  readonly workDir: string;
  /** Every process group the host recorded while running (pgid), for the leak check. */
  readonly groups: () => number[];
  restart(overrides?: ConfigInput): Promise<Host>;
  close(): Promise<void>;
}

const fixtures: HostFixture[] = [];
const tempDirs: string[] = [];

/** A temp directory removed by {@link closeAllHosts}. */
export function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  tempDirs.push(dir);
  return dir;
}

/** A real host on a temp data directory, with the bundled demo agent. */
export async function startHost(options: { config?: ConfigInput; clock?: Clock; dataDir?: string } = {}): Promise<HostFixture> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "berth-host-"));
  const workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-work-")));
  const seen = new Set<number>();
  let host = await Host.start({ config: parseConfig(options.config ?? {}), dataDir, clock: options.clock });
  const watch = (h: Host) =>
    h.onRecord(({ record }) => {
      if (record.kind === "child_acquired") seen.add(record.pid);
    });
  watch(host);
  const fixture: HostFixture = {
    get host() {
      return host;
    },
    dataDir,
    workDir,
    groups: () => [...seen],
    async restart(overrides) {
      await host.shutdown();
      host = await Host.start({ config: parseConfig(overrides ?? options.config ?? {}), dataDir, clock: options.clock });
      watch(host);
      return host;
    },
    async close() {
      await host.shutdown();
      rmSync(workDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  fixtures.push(fixture);
  return fixture;
}

export async function closeAllHosts(): Promise<void> {
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Collects a session's live events. */
export function collect(host: Host, sessionId: string) {
  const events: SessionEvent[] = [];
  const unsubscribe = host.subscribe(sessionId, (event) => events.push(event));
  const texts = () =>
    events.flatMap((event) =>
      event.type === "update" &&
      event.notification.update.sessionUpdate === "agent_message_chunk" &&
      event.notification.update.content.type === "text"
        ? [event.notification.update.content.text]
        : [],
    );
  return { events, texts, unsubscribe };
}

export const text = (value: string) => [{ type: "text" as const, text: value }];
