import type { Command } from "commander";
import { ConfigError } from "../../config/load-config.js";
import { tokenLinkCommand } from "../../config/invocation.js";
import { orderlyStopDeadlineMs } from "../../config/stop-timings.js";
import { FAILURE_EXIT_CODE, INTERRUPTED_EXIT_CODE, USAGE_EXIT_CODE, UsageError } from "../exit-codes.js";
import type { RunningBerth } from "../../server/serve.js";
import { isLoopback } from "../../server/lan-addresses.js";
import { addServeOptions, CLUSTER_SECRET_ENV, resolveServeSettings, type ServeFlags, type ServeSettings } from "../serve-options.js";
import { startupText } from "../startup-text.js";

export function register(program: Command): void {
  addServeOptions(program.command("serve").description("run the Berth host: agents, sessions, the API, the dashboard and ACP over WebSocket"))
    .option("--print-token", "print the dashboard link with the access token (by default only when the token was just created; see `berth token`)")
    .action(async (flags: ServeFlags) => {
      // Everything is stopped by now: a stray timer must not keep a stopped Berth around.
      process.exit(await serve(flags));
    });
}

async function serve(flags: ServeFlags): Promise<number> {
  let settings: ServeSettings;
  try {
    settings = resolveServeSettings(flags);
    // Agents, terminals and services inherit this process's environment: the secret is not theirs.
    delete process.env[CLUSTER_SECRET_ENV];
  } catch (error) {
    if (!(error instanceof ConfigError || error instanceof UsageError)) throw error;
    process.stderr.write(`berth serve: ${error.message}\n`);
    return USAGE_EXIT_CODE;
  }
  // Loaded here, not at the top: every `berth` command registers this one, and only serve needs the server.
  const [{ createLogger }, { startBerth }] = await Promise.all([import("../../host/logger.js"), import("../../server/serve.js")]);
  const log = createLogger({ level: settings.logLevel });
  // Until Berth runs, an uncaught exception is logged and ends the process; then it stops Berth first (below).
  let onUncaught = (error: unknown) => {
    log.error({ err: error }, "uncaught exception: stopping Berth");
    log.flush(() => process.exit(FAILURE_EXIT_CODE));
  };
  process.on("uncaughtException", (error) => onUncaught(error));
  // A promise nobody awaited failed: the work it belonged to is over, the host's state is not half-changed: logged, Berth goes on.
  process.on("unhandledRejection", (reason) => log.error({ err: reason }, "unhandled promise rejection"));
  if (settings.exposure) {
    const { path, mode, secrets } = settings.exposure;
    log.warn({ path, mode, secrets }, "the configuration file holds secrets and other local users can read it: chmod 600 it");
  }
  if (!isLoopback(settings.listenHost)) {
    log.warn(
      { host: settings.listenHost },
      "listening on a non-loopback address: anyone who can reach it and has the token can run agents on this machine",
    );
  }
  // The way to get the link again, named as this Berth was started: `berth`, `npx berth-acp`, or the script's path.
  let running: RunningBerth;
  try {
    running = await startBerth({ ...settings, log, tokenLinkCommand: tokenLinkCommand(settings.dataDir, "page") });
  } catch (error) {
    process.stderr.write(`berth serve: ${error instanceof Error ? error.message : String(error)}\n`);
    return FAILURE_EXIT_CODE;
  }
  // The token goes to stdout once, when it is new, or when asked: a service's output ends up in system journals.
  const text = startupText({
    url: running.server.url,
    token: running.tokenCreated || flags.printToken === true ? running.token : null,
    howToGetLink: `dashboard link: ${tokenLinkCommand(settings.dataDir)}`,
  });
  const stopDeadlineMs = orderlyStopDeadlineMs(settings.config.stopTimeout);
  return new Promise<number>((resolve) => {
    let shuttingDown = false;
    /** Set by an uncaught exception: however the shutdown ends, the exit code says something failed. */
    let failure = false;
    const shutdown = () => {
      shuttingDown = true;
      running
        .shutdown()
        .then(
          () => 0,
          (error: unknown) => {
            log.error({ err: error }, "stopping failed");
            return FAILURE_EXIT_CODE;
          },
        )
        // Read at the very end: an exception up to the exit still makes it 1.
        .then((code) => log.flush(() => resolve(failure ? FAILURE_EXIT_CODE : code)));
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (shuttingDown) {
        log.warn({ signal }, "second signal while stopping: exiting at once");
        process.exit(INTERRUPTED_EXIT_CODE);
      }
      log.info({ signal }, "stopping: interrupting turns and stopping agents");
      shutdown();
    };
    // The state the exception left is unknown: Berth shuts down in order (its agents stopped with it) and exits 1; one
    // while shutting down only sets the exit code.
    onUncaught = (error) => {
      failure = true;
      log.error({ err: error }, shuttingDown ? "uncaught exception while stopping" : "uncaught exception: stopping Berth");
      if (shuttingDown) return;
      shutdown();
      // Nobody sends a second signal here, and what the exception broke may keep the shutdown waiting: a supervisor must
      // see Berth exit, so after the longest an orderly shutdown takes, it exits anyway.
      setTimeout(() => {
        log.error({ afterMs: stopDeadlineMs }, "the stop after an uncaught exception did not end in time: exiting");
        log.flush(() => process.exit(FAILURE_EXIT_CODE));
      }, stopDeadlineMs).unref();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    // Only now: whoever reads this line may signal at once (a test, a supervisor), and must find the handlers.
    process.stdout.write(text);
  });
}
