import type { Config } from "../config/config-schema.js";
import { isPostgresUrl } from "../config/store-url.js";
import { dataPaths, ensureDataDir, secureDataDir, type DataDirSecurity } from "../config/paths.js";
import { Host, OrderlySteps, sweepLeftovers, type HostOptions } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { Access } from "./access.js";
import { AccessToken } from "./access-token.js";
import { loadToken } from "./auth.js";
import { ClusterSecret } from "./cluster-secret.js";
import { DeviceLogins } from "./device-logins.js";
import { deleteHostFile, runningHost, writeHostFile } from "./host-file.js";
import { acquireHostLock, HostLockBusyError, type HostLock } from "./host-lock.js";
import { startServer, type BerthServer, type ServerOptions } from "./http-server.js";
import { reachableUrls } from "./lan-addresses.js";
import { BoundListener, defaultFleetUrl } from "./listener.js";
import { WebhookNotifier } from "./webhook-notifier.js";

export interface BerthOptions {
  readonly config: Config;
  readonly dataDir: string;
  readonly listenHost: string;
  readonly port: number;
  readonly log: Logger;
  readonly webDir?: string;
  readonly tokenLinkCommand?: string;
  readonly maxMessageBytes?: number;
  /** A client with more unsent bytes than this is disconnected (default: the SDK's 64 MiB). */
  readonly maxBufferedBytes?: number;
  /** How long a Streamable HTTP client may have no request and no event stream open before it counts as gone (60 s). */
  readonly httpClientIdleMs?: number;
  readonly events?: ServerOptions["events"];
  readonly tickets?: ServerOptions["tickets"];
  /** What runs an agent's terminal login (the host's `loginCommands`). */
  readonly loginCommands?: HostOptions["loginCommands"];
  /** The configuration file read, hidden from sandboxes. */
  readonly configPath?: string;
}

export interface RunningBerth {
  readonly host: Host;
  readonly server: BerthServer;
  /** The access token now (`berth token rotate` replaces it). */
  readonly token: string;
  readonly access: Access;
  /** Whether this start made the token (a new data directory, or its token file was deleted). */
  readonly tokenCreated: boolean;
  /** Shuts everything down, once; later calls return the same promise. */
  shutdown(): Promise<void>;
}

class AlreadyRunningError extends Error {
  override readonly name = "AlreadyRunningError";
}

/**
 * Starts the host on a data directory and puts it on the network, then records the running
 * host in `<dataDir>/host.json`. Before anything else it takes the data directory's exclusive
 * lock (`host.lock`, released by the kernel when this process dies): a second host on the same
 * directory is refused, since its start-up would reap this host's agents as leftovers and its
 * writes would race this one's. The directory is then tightened (0700, files 0600).
 */
export async function startBerth(options: BerthOptions): Promise<RunningBerth> {
  const paths = dataPaths(options.dataDir);
  ensureDataDir(paths.dataDir);
  const lock = takeLock(paths);
  let security: DataDirSecurity;
  try {
    security = secureDataDir(paths.dataDir);
  } catch (error) {
    lock.release();
    throw error;
  }
  if (security.wasOpen) {
    options.log.warn(
      { dataDir: paths.dataDir, mode: security.foundMode?.toString(8), tightened: security.tightened },
      "the data directory was accessible to other users; it is now 0700 and Berth's files in it 0600",
    );
  } else if (security.tightened.length > 0) {
    options.log.warn(
      { dataDir: paths.dataDir, tightened: security.tightened },
      "Berth's files in the data directory were readable by other users; tightened to 0600",
    );
  }
  let listener: BoundListener;
  let host: Host;
  let server: BerthServer;
  let token: string;
  let tokenCreated: boolean;
  try {
    ({ token, created: tokenCreated } = loadToken(paths.token));
    listener = await BoundListener.bind(options.listenHost, options.port);
  } catch (error) {
    lock.release();
    throw error;
  }
  // The port is known now: a fleet host with no fleet.url registers the address it listens on (docs/fleet.md).
  const fleet = { ...options.config.fleet, url: options.config.fleet.url ?? defaultFleetUrl(options.listenHost, listener.port) ?? undefined };
  try {
    host = await Host.start({
      config: { ...options.config, fleet },
      dataDir: paths.dataDir,
      logger: options.log,
      loginCommands: options.loginCommands,
      configFile: options.configPath,
    });
  } catch (error) {
    listener.close();
    lock.release();
    throw error;
  }
  const access = new Access(
    new AccessToken(token, paths.token),
    new DeviceLogins(paths.logins),
    clusterSecretOf(options.config, host.hostId, fleet.url ?? null),
  );
  access.token.onRotate(() => options.log.info({}, "access token rotated: the old token, remembered devices and open connections are refused"));
  try {
    const { listenHost, log, webDir, tokenLinkCommand, maxMessageBytes, maxBufferedBytes, httpClientIdleMs, events, tickets } = options;
    const { allowedHosts, maxConnections, headersTimeout: headersTimeoutMs } = options.config.server;
    server = await startServer({
      host,
      access,
      listenHost,
      listener,
      log,
      webDir,
      tokenLinkCommand,
      maxMessageBytes,
      maxBufferedBytes,
      httpClientIdleMs,
      events,
      allowedHosts,
      tickets,
      maxConnections,
      headersTimeoutMs,
    });
  } catch (error) {
    listener.close();
    await host.shutdown();
    lock.release();
    throw error;
  }
  writeHostFile(paths.hostFile, { url: server.url, pid: process.pid, startedAt: Date.now() });
  const webhook = options.config.notify.webhook;
  const notifier = webhook && new WebhookNotifier({ host, config: webhook, log: options.log, dashboardUrl: reachableUrls(server.url)[0]! });

  let shuttingDown: Promise<void> | undefined;
  const shutdown = async () => {
    // Each step runs whatever happened to the one before it: the host file and the lock are let go whatever failed.
    // (The host logs each of its own steps that failed; "stop the host" names the whole.)
    const steps = new OrderlySteps(options.log, "stopping step failed");
    await steps.run("stop listening", () => {
      server.stopListening();
      notifier?.close();
    });
    // Running turns are interrupted (reason `shutdown`) while their clients still listen; once every agent is
    // stopped, the clients get their answers and their connections close, and only then the store.
    await steps.run("stop the host", () => host.shutdown({ beforeClose: () => server.close("Berth is shutting down") }));
    // Closed already by the host's shutdown, unless that failed or stopped early (then now, before the sweep's wait).
    await steps.run("close the server", () => server.close("Berth is shutting down"));
    await steps.run("sweep leftover processes", async () => {
      const swept = await sweepLeftovers(paths.dataDir, options.config.stopTimeout);
      if (swept !== "already-gone")
        options.log.warn({ outcome: swept }, "stopped processes that had left their agents' and terminals' process groups");
    });
    await steps.run("delete the host file", () => deleteHostFile(paths.hostFile));
    await steps.run("release the lock", () => lock.release());
    if (steps.failed.length > 0) throw new Error(`Berth stopped, but these steps failed: ${steps.failed.join(", ")}`);
    options.log.info({}, "berth stopped");
  };
  return {
    host,
    server,
    get token() {
      return access.token.value;
    },
    access,
    tokenCreated,
    shutdown: () => (shuttingDown ??= shutdown()),
  };
}

/** The fleet's secret, for host `hostId` registered at `url`; on SQLite (one host, no peers) none, whatever the configuration says. */
function clusterSecretOf(config: Config, hostId: string | null, url: string | null): ClusterSecret {
  return new ClusterSecret(isPostgresUrl(config.store) ? config.fleet.secret : undefined, hostId, url);
}

function takeLock(paths: ReturnType<typeof dataPaths>): HostLock {
  try {
    return acquireHostLock(paths.lock);
  } catch (error) {
    if (!(error instanceof HostLockBusyError)) throw error;
    // The lock is the truth; host.json only names the holder, and may not be written yet.
    const other = runningHost(paths.hostFile);
    const holder = other ? ` (pid ${other.pid}, ${other.url})` : ` (another host holds ${paths.lock} and has not written ${paths.hostFile} yet)`;
    throw new AlreadyRunningError(`Berth is already running on ${paths.dataDir}${holder}`, { cause: error });
  }
}
