import type { Logger } from "../host/logger.js";
import type { Clock, Timer } from "../host/views.js";
import { berthVersion } from "../version.js";

interface WebhookTarget {
  readonly url: string;
  /** Sent with every POST; never logged (they may hold a credential). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface WebhookDeliveryOptions {
  readonly target: WebhookTarget;
  readonly clock: Clock;
  readonly log: Logger;
  /** Waits between attempts; one attempt more than there are waits. */
  readonly retryDelaysMs?: readonly number[];
  /** One attempt is given up after this long (a receiver that never answers). */
  readonly attemptTimeoutMs?: number;
  /** Deliveries waiting or in flight beyond this are dropped (a receiver down for hours must not grow memory). */
  readonly maxPending?: number;
}

/** 1 s, 5 s, 30 s, 2 min, 10 min: a receiver restarting or briefly down still gets the message. */
const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000];
const ATTEMPT_TIMEOUT_MS = 10_000;
const MAX_PENDING = 100;

/** What one attempt came to. */
type Attempt =
  | { readonly name: "delivered"; readonly status: number }
  | { readonly name: "failed"; readonly reason: string; readonly retry: boolean };

/**
 * POSTs JSON to the operator's webhook, never holding up the caller: each message is tried,
 * and tried again with backoff while the receiver is unreachable or answers 408, 425, 429 or
 * 5xx. Any other 4xx means the hook is wrong: retrying would not help, so it is given up at
 * once. Logs name the receiver by its origin only (the path of a Slack hook is its secret).
 */
export class WebhookDelivery {
  private readonly retryDelaysMs: readonly number[];
  private readonly attemptTimeoutMs: number;
  private readonly maxPending: number;
  private readonly timers = new Set<Timer>();
  private readonly inFlight = new Set<AbortController>();
  private pending = 0;
  private closed = false;
  /** Where logs say messages go: scheme, host and port, nothing of the path or query. */
  readonly receiver: string;

  constructor(private readonly options: WebhookDeliveryOptions) {
    this.retryDelaysMs = options.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.maxPending = options.maxPending ?? MAX_PENDING;
    this.receiver = new URL(options.target.url).origin;
  }

  /** Queues one message; `fields` name it in the log lines (event, session), never its content. */
  send(body: unknown, fields: Readonly<Record<string, unknown>>): void {
    if (this.closed) return;
    if (this.pending >= this.maxPending) {
      this.options.log.warn(
        { ...fields, receiver: this.receiver, pending: this.pending },
        "webhook message dropped: too many waiting for the receiver",
      );
      return;
    }
    this.pending++;
    void this.attempt(JSON.stringify(body), fields, 1);
  }

  /** Stops retrying and aborts what is in flight (host shutdown). */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) timer.cancel();
    this.timers.clear();
    for (const controller of this.inFlight) controller.abort();
  }

  private async attempt(text: string, fields: Readonly<Record<string, unknown>>, attempt: number): Promise<void> {
    const outcome = await this.post(text);
    if (this.closed) return;
    const { log } = this.options;
    if (outcome.name === "delivered") {
      this.pending--;
      log.info({ ...fields, receiver: this.receiver, status: outcome.status, attempt }, "webhook delivered");
      return;
    }
    const delay = this.retryDelaysMs[attempt - 1];
    if (!outcome.retry || delay === undefined) {
      this.pending--;
      log.warn({ ...fields, receiver: this.receiver, attempts: attempt, reason: outcome.reason }, "webhook given up");
      return;
    }
    log.warn({ ...fields, receiver: this.receiver, attempt, reason: outcome.reason, retryInMs: delay }, "webhook failed; retrying");
    const timer = this.options.clock.setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(text, fields, attempt + 1);
    }, delay);
    this.timers.add(timer);
  }

  private async post(text: string): Promise<Attempt> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timeout = setTimeout(() => controller.abort(new Error(`no answer within ${this.attemptTimeoutMs} ms`)), this.attemptTimeoutMs);
    timeout.unref();
    try {
      const response = await fetch(this.options.target.url, {
        method: "POST",
        headers: { ...this.options.target.headers, "Content-Type": "application/json", "User-Agent": `berth/${berthVersion}` },
        body: text,
        signal: controller.signal,
        // A redirect is not followed: the headers (a credential) must reach only the URL the operator named.
        redirect: "manual",
      });
      // The body is not needed; reading it frees the connection.
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) return { name: "delivered", status: response.status };
      const retry = response.status >= 500 || [408, 425, 429].includes(response.status);
      return { name: "failed", reason: `HTTP ${response.status}`, retry };
    } catch (error) {
      return { name: "failed", reason: reasonOf(error, controller.signal), retry: true };
    } finally {
      clearTimeout(timeout);
      this.inFlight.delete(controller);
    }
  }
}

/** Why a request failed, without the URL (fetch's messages and causes may carry it). */
function reasonOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason.message : "aborted";
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (cause && typeof cause.code === "string") return cause.code;
  return error instanceof Error ? error.name : "request failed";
}
