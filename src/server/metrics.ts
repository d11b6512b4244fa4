import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Host } from "../host/host.js";
import type { SessionChildState } from "../host/views.js";

const SESSION_STATES: readonly SessionChildState[] = ["childless", "acquiring", "live", "releasing"];

/**
 * Berth's Prometheus metrics on a registry of their own. Gauges are read from the host at
 * scrape time (reading never boots anything); counters and the histogram follow its records.
 */
export class BerthMetrics {
  readonly registry = new Registry();
  private readonly unsubscribe: () => void;

  /** The sessions' states, read once per scrape (one query) and shared by the gauges that need them. */
  private scraped: ReturnType<Host["sessionStates"]> | undefined;

  constructor(host: Host, clientsConnected: () => number) {
    const registers = [this.registry];
    const sessionStates = () => (this.scraped ??= host.sessionStates());
    new Gauge({
      name: "berth_sessions",
      help: "Sessions by the state of their agent child.",
      labelNames: ["state"],
      registers,
      collect() {
        const counts = new Map(SESSION_STATES.map((state) => [state, 0]));
        for (const session of sessionStates()) counts.set(session.state, (counts.get(session.state) ?? 0) + 1);
        for (const [state, count] of counts) this.set({ state }, count);
      },
    });
    new Gauge({
      name: "berth_agent_children",
      help: "Live agent child processes.",
      registers,
      collect() {
        this.set(sessionStates().filter((session) => session.pid !== null).length);
      },
    });
    new Gauge({
      name: "berth_locations_cached",
      help: "Locations whose services are booted and retained.",
      registers,
      collect() {
        this.set(host.locations().length);
      },
    });
    new Gauge({
      name: "berth_questions_pending",
      help: "Questions (permissions, forms) waiting for an answer.",
      registers,
      collect() {
        this.set(host.pendingQuestions().length);
      },
    });
    new Gauge({
      name: "berth_process_tracking",
      help: "How the host finds every descendant of its children: 1 for the mode in use (cgroup: a cgroup v2 per child and the environment marker; marker: the marker alone).",
      labelNames: ["mode"],
      registers,
      collect() {
        const mode = host.processTracking().mode;
        this.set({ mode: "cgroup" }, mode === "cgroup" ? 1 : 0);
        this.set({ mode: "marker" }, mode === "marker" ? 1 : 0);
      },
    });
    new Gauge({
      name: "berth_clients_connected",
      help: "ACP clients connected over WebSocket.",
      registers,
      collect() {
        this.set(clientsConnected());
      },
    });
    new Gauge({
      name: "berth_store_degraded",
      help: "1 while the store cannot write (another process holds its write lock, a full disk, a read-only file): writes wait, in order.",
      registers,
      collect() {
        this.set(host.storeHealth().state === "degraded" ? 1 : 0);
      },
    });
    new Gauge({
      name: "berth_store_pending_writes",
      help: "Writes queued for the store and not committed yet.",
      registers,
      collect() {
        this.set(host.storeHealth().pendingWrites);
      },
    });
    const evictions = new Counter({
      name: "berth_location_evictions_total",
      help: "Locations evicted, by reason (idle, inactivity).",
      labelNames: ["reason"],
      registers,
    });
    const interruptions = new Counter({
      name: "berth_interruptions_total",
      help: "Turns interrupted, by reason (user, inactivity, shutdown).",
      labelNames: ["reason"],
      registers,
    });
    const turns = new Counter({
      name: "berth_turns_total",
      help: "Turns ended, by outcome: the stop reason, or failed.",
      labelNames: ["outcome"],
      registers,
    });
    // Known reasons start at 0, so rates work from the first scrape.
    for (const reason of ["idle", "inactivity"]) evictions.inc({ reason }, 0);
    for (const reason of ["user", "inactivity", "shutdown"]) interruptions.inc({ reason }, 0);
    for (const outcome of ["end_turn", "cancelled", "failed"]) turns.inc({ outcome }, 0);
    const acquisitions = new Histogram({
      name: "berth_acquisition_seconds",
      help: "Time to start an agent child and open its session.",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.unsubscribe = host.onRecord(({ record }) => {
      switch (record.kind) {
        case "location_evicted":
          return evictions.inc({ reason: record.reason });
        case "session_interrupted":
          return interruptions.inc({ reason: record.reason });
        case "turn_ended":
          return turns.inc({ outcome: record.error === null ? (record.stopReason ?? "unknown") : "failed" });
        case "child_acquired":
          return acquisitions.observe(record.ms / 1000);
      }
    });
  }

  /** The Prometheus text exposition. */
  async render(): Promise<string> {
    try {
      return await this.registry.metrics();
    } finally {
      this.scraped = undefined;
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  close(): void {
    this.unsubscribe();
  }
}
