import type * as Prometheus from "prom-client";
import type { Host } from "../host/host.js";
import type { HostRecord, SessionChildState } from "../host/views.js";
import type { ClientBufferBudget, ClientBufferFigures } from "./client-buffer-budget.js";

const SESSION_STATES: readonly SessionChildState[] = ["childless", "acquiring", "live", "releasing"];

/** The records the counters and the histogram follow: `Meters.count` handles exactly these (the compiler checks). */
const COUNTED_KINDS = [
  "location_evicted",
  "session_interrupted",
  "turn_ended",
  "child_acquired",
  "session_adopted",
  "session_lost",
] as const satisfies readonly HostRecord["kind"][];
type CountedRecord = Extract<HostRecord, { kind: (typeof COUNTED_KINDS)[number] }>;
const COUNTED: ReadonlySet<string> = new Set(COUNTED_KINDS);
const isCounted = (record: HostRecord): record is CountedRecord => COUNTED.has(record.kind);
/** Records kept while prom-client is not loaded: past this many (it cannot be loaded) the newest are not counted. */
const MAX_WAITING = 10_000;

/**
 * Berth's Prometheus metrics. prom-client (a tenth of a second of start-up) is loaded at the first scrape or the first
 * record to count, not at start: the records that come while it loads are counted once it is there, in order. If it
 * cannot be loaded (a broken install), a scrape fails saying so and the next one tries again; the host goes on.
 */
export class BerthMetrics {
  private readonly unsubscribe: () => void;
  private meters: Meters | undefined;
  private loading: Promise<Meters> | undefined;
  private waiting: CountedRecord[] = [];

  constructor(
    private readonly host: Host,
    private readonly clientsConnected: () => number,
    private readonly clientBuffers: ClientBufferBudget,
    private readonly loadPrometheus: () => Promise<typeof Prometheus> = () => import("prom-client"),
  ) {
    this.unsubscribe = host.onRecord(({ record }) => {
      if (!isCounted(record)) return;
      if (this.meters) return this.meters.count(record);
      if (this.waiting.length < MAX_WAITING) this.waiting.push(record);
      // A failure to load is the scrape's to tell.
      this.load().catch(() => undefined);
    });
  }

  /** The Prometheus text exposition and its content type. */
  async render(): Promise<{ contentType: string; text: string }> {
    const meters = await this.load();
    return { contentType: meters.registry.contentType, text: await meters.render() };
  }

  close(): void {
    this.unsubscribe();
  }

  private load(): Promise<Meters> {
    this.loading ??= this.loadPrometheus().then(
      (prometheus) => {
        const meters = new Meters(prometheus, this.host, this.clientsConnected, this.clientBuffers);
        for (const record of this.waiting) meters.count(record);
        this.waiting = [];
        this.meters = meters;
        return meters;
      },
      (error: unknown) => {
        this.loading = undefined;
        const why = error instanceof Error ? error.message : String(error);
        throw new Error(`the metrics library (prom-client) could not be loaded: ${why}`, { cause: error });
      },
    );
    return this.loading;
  }
}

/**
 * The metrics on a registry of their own. Gauges are read from the host at scrape time (reading never boots
 * anything); counters and the histogram follow its records.
 */
class Meters {
  readonly registry: Prometheus.Registry;
  /** Counts one record of a {@link COUNTED_KINDS} kind. */
  readonly count: (record: CountedRecord) => void;

  /** The sessions' states, read once per scrape (one query) and shared by the gauges that need them. */
  private scraped: ReturnType<Host["sessionStates"]> | undefined;
  /** The fleet's counts, read once per scrape likewise. */
  private fleet: ReturnType<Host["fleetCounts"]> | undefined;
  /** What is queued for clients, read once per scrape likewise. */
  private clientBuffers: ClientBufferFigures | undefined;

  constructor(
    private readonly prometheus: typeof Prometheus,
    host: Host,
    clientsConnected: () => number,
    clientBuffers: ClientBufferBudget,
  ) {
    const { Counter, Gauge, Histogram, Registry } = prometheus;
    this.registry = new Registry();
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
    this.clientBufferGauges(clientBuffers);
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
    const inFleet = host.hosts() !== undefined;
    if (inFleet) this.fleetGauges(host);
    // Only in a fleet, like the fleet's gauges: a single host on SQLite has no one to take a session from or lose it to.
    const fleetMoves = inFleet
      ? new Counter({
          name: "berth_fleet_sessions_moved_total",
          help: "Sessions this host adopted from an offline host (adopted) or lost to another host (lost).",
          labelNames: ["direction"],
          registers,
        })
      : undefined;
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
    for (const direction of ["adopted", "lost"]) fleetMoves?.inc({ direction }, 0);
    const acquisitions = new Histogram({
      name: "berth_acquisition_seconds",
      help: "Time to start an agent child and open its session.",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.count = (record) => {
      switch (record.kind) {
        case "location_evicted":
          return evictions.inc({ reason: record.reason });
        case "session_interrupted":
          return interruptions.inc({ reason: record.reason });
        case "turn_ended":
          return turns.inc({ outcome: record.error === null ? (record.stopReason ?? "unknown") : "failed" });
        case "child_acquired":
          return acquisitions.observe(record.ms / 1000);
        case "session_adopted":
          return fleetMoves?.inc({ direction: "adopted" });
        case "session_lost":
          return fleetMoves?.inc({ direction: "lost" });
        default:
          return record satisfies never;
      }
    };
  }

  /** What is queued for ACP WebSocket clients, against `server.clientBufferBudget` (docs/serve.md, "Slow clients"). */
  private clientBufferGauges(buffers: ClientBufferBudget): void {
    const { Counter, Gauge } = this.prometheus;
    const registers = [this.registry];
    const read = () => (this.clientBuffers ??= buffers.figures());
    const gauge = (name: string, help: string, value: (figures: ClientBufferFigures) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value(read()));
        },
      });
    gauge("berth_client_queued_bytes", "Bytes queued for every ACP WebSocket client and not yet handed to the kernel.", (f) => f.queuedBytes);
    gauge(
      "berth_client_queued_bytes_peak",
      "The most bytes ever queued for ACP WebSocket clients at once (looked at whenever a client reached its share).",
      (f) => f.peakQueuedBytes,
    );
    gauge(
      "berth_client_buffer_budget_bytes",
      "server.clientBufferBudget: what every ACP WebSocket client's queue may hold together.",
      (f) => f.budgetBytes,
    );
    gauge(
      "berth_client_share_bytes",
      "What one ACP WebSocket client may have queued before it is fed from the journal: server.clientHighWater, or the budget split evenly among the clients.",
      (f) => f.shareBytes,
    );
    gauge(
      "berth_client_feeds_catching_up",
      "Session feeds fed from the journal now: their client fell behind the live stream.",
      (f) => f.feedsCatchingUp,
    );
    new Counter({
      name: "berth_client_catchups_total",
      help: "Times a session feed's client fell behind the live stream and was fed from the journal.",
      registers,
      collect() {
        this.reset();
        this.inc(read().catchUps);
      },
    });
  }

  /**
   * The whole fleet as this host sees it (docs/api.md, "GET /metrics"): every host's state and the sessions and
   * questions each owns, the same on every host. Read once per scrape from the fleet directory in memory and this
   * host's mirror, never per session.
   */
  private fleetGauges(host: Host): void {
    const { Gauge } = this.prometheus;
    const registers = [this.registry];
    const counts = () => (this.fleet ??= host.fleetCounts());
    new Gauge({
      name: "berth_fleet_host_online",
      help: "1 while the host heartbeats within fleet.hostTtl, 0 once it is offline; one series per host of the fleet.",
      labelNames: ["host"],
      registers,
      collect() {
        this.reset();
        for (const each of counts()?.hosts ?? []) this.set({ host: each.id }, each.online ? 1 : 0);
      },
    });
    new Gauge({
      name: "berth_fleet_host_incarnation",
      help: "How many times the host id registered (one more at each start of a process under it).",
      labelNames: ["host"],
      registers,
      collect() {
        this.reset();
        for (const each of counts()?.hosts ?? []) this.set({ host: each.id }, each.incarnation);
      },
    });
    new Gauge({
      name: "berth_fleet_sessions",
      help: 'Sessions of the whole fleet by owner host and whether it is online (host_online="false": shown as host offline, waiting for its host or an adoption; host="": no owner).',
      labelNames: ["host", "host_online"],
      registers,
      collect() {
        this.reset();
        const fleet = counts();
        for (const each of fleet?.hosts ?? []) this.set({ host: each.id, host_online: String(each.online) }, 0);
        for (const group of fleet?.sessions ?? []) this.set({ host: group.host ?? "", host_online: String(group.online) }, group.count);
      },
    });
    new Gauge({
      name: "berth_fleet_questions_pending",
      help: "Pending questions of the whole fleet by the host that owns their session.",
      labelNames: ["host"],
      registers,
      collect() {
        this.reset();
        for (const group of counts()?.questions ?? []) this.set({ host: group.host ?? "" }, group.count);
      },
    });
  }

  /** The Prometheus text exposition. */
  async render(): Promise<string> {
    try {
      return await this.registry.metrics();
    } finally {
      this.scraped = undefined;
      this.fleet = undefined;
      this.clientBuffers = undefined;
    }
  }
}
