import { isAbsolute } from "node:path";
import { isStoreSetting, STORE_FORM } from "./store-url.js";
import { z } from "zod";
import { lifecycleDefaults } from "../lifecycle/defaults.js";
import { ALLOWED_HOST_FORM, parseAllowedHost } from "./allowed-hosts.js";
import { DURATION_FORM, parseByteSize, parseDuration } from "./durations.js";

const duration = z.string({ error: DURATION_FORM }).transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined) {
    ctx.addIssue({ code: "custom", message: `${DURATION_FORM}, got "${text}"` });
    return z.NEVER;
  }
  return ms;
});

/** The ports browsers and `fetch` refuse to connect to (the Fetch standard's "bad ports"): a host there is unreachable. */
const BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123,
  135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995,
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);
export const BLOCKED_PORT = "browsers and fetch refuse to connect to this port (one of the Fetch standard's bad ports): choose another";

export function isBlockedPort(port: number): boolean {
  return BLOCKED_PORTS.has(port);
}

/** The longest wait a Node timer holds in one (about 24.8 days): past it, it would fire at once. */
const LONGEST_WAIT = "24d";
/** How long Berth waits for something before giving up on it: neither nothing nor longer than a timer holds. */
const LONGEST_WAIT_MS = parseDuration(LONGEST_WAIT)!;
const wait = duration.refine((ms) => ms > 0 && ms <= LONGEST_WAIT_MS, `expected a wait of more than 0 and at most ${LONGEST_WAIT}`);

const byteSize = z
  .union([z.number().int().positive(), z.string()], { error: 'expected a size such as "1MiB" or a number of bytes' })
  .transform((value, ctx) => {
    if (typeof value === "number") return value;
    const bytes = parseByteSize(value);
    if (bytes === undefined || bytes <= 0) {
      ctx.addIssue({ code: "custom", message: `expected a size such as "64KiB" or "1MiB", got "${value}"` });
      return z.NEVER;
    }
    return bytes;
  });

const allowedHost = z.string({ error: ALLOWED_HOST_FORM }).transform((text, ctx) => {
  const parsed = parseAllowedHost(text);
  if (parsed === undefined) {
    ctx.addIssue({ code: "custom", message: `${ALLOWED_HOST_FORM}, got "${text}"` });
    return z.NEVER;
  }
  return parsed;
});

/** `notify.webhook`: where Berth POSTs what needs a person (docs/serve.md, "Notifications"). */
const webhookSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL such as "https://ntfy.sh/my-berth"' }),
  /** A question that has waited this long is sent; a turn that ran at least this long is sent when it ends. */
  afterMinutes: z.number({ error: "expected a number of minutes" }).min(0, "expected 0 or more minutes").default(5),
  events: z
    .array(z.enum(["question_waiting", "turn_ended"], { error: 'expected "question_waiting" or "turn_ended"' }))
    .default(["question_waiting", "turn_ended"]),
  /** Sent with every POST (an `Authorization` for ntfy, say); never logged. */
  headers: z.record(z.string(), z.string({ error: "expected a string value" })).default({}),
});

/** A shorter cluster secret is too easy to guess for something that lets a peer act for any client. */
export const MIN_SECRET_LENGTH = 16;
const nonEmpty = z.string({ error: "expected a non-empty string" }).min(1, "expected a non-empty string");
const env = z.record(z.string(), z.string({ error: "expected a string value" })).default({});

/** A path the configuration names, read wherever Berth runs: absolute, or under the home (`~/`). */
const placedPath = z
  .string({ error: "expected a path" })
  .refine((path) => path.startsWith("/") || path === "~" || path.startsWith("~/"), 'expected an absolute path or one under the home ("~/...")');
const sandboxMode = z.enum(["off", "workspace-write"], { error: 'expected "off" or "workspace-write"' }).optional();
const sandboxNetwork = z.enum(["on", "off"], { error: 'expected "on" or "off"' }).optional();
/** An agent entry's sandbox, and a location's: over the host's `sandbox`; `binds` add writable paths for them alone. */
const sandboxLayer = z.strictObject({ mode: sandboxMode, network: sandboxNetwork, binds: z.array(placedPath).default([]) });

const agentSchema = z.strictObject({
  command: nonEmpty,
  args: z.array(z.string({ error: "expected a string" })).default([]),
  env,
  /** This agent's sandbox (docs/sandbox.md): over the host's `sandbox`; `binds` add writable paths for it alone. */
  sandbox: sandboxLayer.optional(),
});

const serviceSchema = z.strictObject({
  command: nonEmpty,
  /** `{port}` in args and env values is replaced by the allocated port. */
  args: z.array(z.string({ error: "expected a string" })).default([]),
  env,
  port: z.literal("auto", { error: 'expected "auto" (Berth allocates the port)' }).optional(),
  /** An MCP server over HTTP at this path, passed to agents that support HTTP MCP. */
  mcp: z.strictObject({ type: z.literal("http", { error: 'expected "http"' }), path: z.string().default("/mcp") }).optional(),
  readyTimeout: wait.prefault("30s"),
});

export const configSchema = z
  .strictObject({
    defaultAgent: nonEmpty.default("demo"),
    agents: z.record(z.string(), agentSchema).default({}),
    /**
     * The ACP Agent Registry (`registry.json`) that `berth agents add` and the dashboard install from: a path or an
     * http(s) URL; default, the snapshot Berth ships. Not `agents.registry`: `agents` maps agent ids to commands.
     */
    agentRegistry: nonEmpty.optional(),
    services: z.record(z.string(), serviceSchema).default({}),
    /** Every agent's sandbox unless its entry or its session says otherwise (docs/sandbox.md). */
    sandbox: z
      .strictObject({
        mode: sandboxMode,
        network: sandboxNetwork,
        /** More writable paths, for every sandboxed session. */
        binds: z.array(placedPath).default([]),
        /** More hidden paths. */
        hide: z.array(placedPath).default([]),
        /** The bubblewrap binary: a name looked up on PATH, or a path. */
        bwrap: nonEmpty.default("bwrap"),
        /**
         * Directory → the sandbox of sessions there (the session's directory, a worktree session's repository): over
         * the host's; the longest that holds the session wins; with an agent entry's, the stricter of the two.
         */
        locations: z.record(placedPath, sandboxLayer).default({}),
      })
      .prefault({}),
    releaseGrace: duration.prefault(`${lifecycleDefaults.releaseGraceMs}ms`),
    idleTtl: duration.prefault(`${lifecycleDefaults.idleTtlMs}ms`),
    maxActiveHold: duration.prefault(`${lifecycleDefaults.maxActiveHoldMs}ms`),
    sweepInterval: duration.prefault(`${lifecycleDefaults.sweepIntervalMs}ms`),
    /**
     * Whether a location whose sessions a client still holds (an open chat, an editor) may be
     * evicted on its idle TTL. Off: a held location stays retained, still subject to the cap.
     */
    evictHeld: z.boolean({ error: "expected true or false" }).default(false),
    terminalOutputLimit: byteSize.default(1024 * 1024),
    outputRetention: duration.prefault("7d"),
    recordRetention: duration.prefault("30d"),
    initializeTimeout: wait.prefault("30s"),
    interruptTimeout: wait.prefault("10s"),
    /** How long the prompting client may take to answer an agent's `fs/*` request before the disk answers it. */
    clientFileTimeout: wait.prefault("10s"),
    stopTimeout: wait.prefault("3s"),
    /**
     * How long work that must be stored before it is acknowledged (a session created or deleted, a
     * question answered) waits for a store that cannot write (another process holds its write lock,
     * a full disk) before it fails with a clear error. The write stays queued.
     */
    writeTimeout: wait.prefault("10s"),
    /**
     * How much may wait to be stored (while the store cannot write) before agents' output is no longer read: their pipes
     * fill and they wait, until half of it is stored. Nothing is dropped.
     */
    writeBacklogLimit: byteSize.default(64 * 1024 * 1024),
    /** Where the `authenticate` an agent accepted is kept for its later children: memory, or a 0600 file in the data directory. */
    rememberLogins: z.enum(["memory", "file"], { error: 'expected "memory" or "file"' }).default("memory"),
    notify: z.strictObject({ webhook: webhookSchema.optional() }).default({}),
    dataDir: placedPath.optional(),
    /** Sessions in git worktrees of their own (docs/worktrees.md). */
    worktrees: z
      .strictObject({
        /** Where worktrees are made; default `<dataDir>/worktrees`. */
        root: nonEmpty.refine(isAbsolute, "expected an absolute path").optional(),
        /** A shell command run in each new worktree before its agent starts; default the repository's `.berth/setup`. */
        setup: nonEmpty.optional(),
        /** A shell command that must pass before a worktree lands; default the repository's `.berth/check`. */
        check: nonEmpty.optional(),
        /** How long a setup or a check may run before its process group is killed and it counts as failed. */
        timeout: wait.prefault("10m"),
        /** How a landed branch joins its base: always a merge commit, or only a fast-forward. */
        merge: z.enum(["merge", "ff-only"], { error: 'expected "merge" or "ff-only"' }).default("merge"),
      })
      .prefault({}),
    /** Where sessions are kept: "sqlite" (a file in the data directory) or a PostgreSQL URL shared by a fleet of hosts (docs/fleet.md). */
    store: z.string({ error: STORE_FORM }).refine(isStoreSetting, STORE_FORM).default("sqlite"),
    /** This host in a fleet (`store` a PostgreSQL URL); ignored on SQLite. */
    fleet: z
      .strictObject({
        /** The host's id in the fleet (default: the machine's host name). One running process per id. */
        hostId: nonEmpty.optional(),
        /** Where the other hosts reach this one (recorded with its registration). */
        url: nonEmpty.optional(),
        /**
         * Shared by every host of the fleet: hosts relay a session's ACP and REST to its owner, authenticated by it
         * (docs/fleet.md, "Routing"). Without one, another host's session stays read-only here. Env `BERTH_CLUSTER_SECRET`.
         */
        secret: z
          .string({ error: "expected the cluster secret as a string" })
          .min(MIN_SECRET_LENGTH, `expected a cluster secret of at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -base64 32)`)
          .optional(),
        heartbeatInterval: wait.prefault("5s"),
        /** A host whose heartbeat is older than this is offline and its sessions may be taken; the same on every host of a fleet. */
        hostTtl: wait.prefault("30s"),
        /**
         * Whether this host adopts a session whose owner is offline (silent past hostTtl) when a client opens it here and
         * its directory exists here. Off by default: the same path on two machines is not necessarily the same files.
         */
        adopt: z.boolean({ error: "expected true or false" }).default(false),
      })
      .prefault({})
      .refine((fleet) => fleet.heartbeatInterval > 0 && fleet.heartbeatInterval * 2 <= fleet.hostTtl, {
        message: "heartbeatInterval must be more than 0 and at most half of hostTtl",
      }),
    server: z
      .strictObject({
        host: nonEmpty.default("127.0.0.1"),
        port: z
          .number({ error: "expected a port number" })
          .int()
          .min(0)
          .max(65535)
          .refine((port) => !isBlockedPort(port), BLOCKED_PORT)
          .default(7420),
        /** More names Berth answers to (behind a reverse proxy); see docs/serve.md. */
        allowedHosts: z.array(allowedHost, { error: "expected a list of host names" }).default([]),
        /**
         * Open connections (HTTP, event streams, ACP WebSockets) beyond which a new one is closed at once: well under the
         * usual file limit of 1,024, so that a flood of connections cannot starve the host of file descriptors.
         */
        maxConnections: z.number({ error: "expected a whole number of connections" }).int().min(1).default(512),
        /** How long a connection may take to send a request's headers before it is closed (Node's default: 60 s). */
        headersTimeout: wait.prefault("10s"),
        /**
         * What Berth keeps queued for every ACP WebSocket client together; a client that has its share queued (at most
         * `clientHighWater`) is fed from the journal as it reads, not from memory (docs/serve.md, "Slow clients").
         */
        clientBufferBudget: byteSize.default(256 * 1024 * 1024),
        clientHighWater: byteSize.default(4 * 1024 * 1024),
      })
      .prefault({})
      .refine((server) => server.clientHighWater <= server.clientBufferBudget, {
        message: "clientHighWater must be at most clientBufferBudget",
        path: ["clientHighWater"],
      }),
  })
  .refine((config) => config.sweepInterval > 0, { message: "must be more than 0", path: ["sweepInterval"] });

/** The configuration file as written (durations as text). */
export type ConfigInput = z.input<typeof configSchema>;
/** The validated configuration (durations in milliseconds, sizes in bytes). */
export type Config = z.output<typeof configSchema>;
export type AgentConfig = Config["agents"][string];
export type ServiceConfig = Config["services"][string];
export type WebhookConfig = NonNullable<Config["notify"]["webhook"]>;
