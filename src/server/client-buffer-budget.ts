/** What a socket has queued for its client and not yet handed to the kernel (ws's `bufferedAmount`). */
interface ClientQueueSize {
  readonly bufferedAmount: number;
}

/** The budget's figures, for the metrics (docs/api.md, "GET /metrics"). */
export interface ClientBufferFigures {
  /** Bytes queued for every WebSocket client now. */
  readonly queuedBytes: number;
  /** The most ever seen queued at once (looked at whenever a client reached its share). */
  readonly peakQueuedBytes: number;
  readonly budgetBytes: number;
  /** What one client may have queued before it is fed from the journal, with this many clients. */
  readonly shareBytes: number;
  /** Session feeds being fed from the journal now (their client fell behind). */
  readonly feedsCatchingUp: number;
  /** Times a session feed fell behind and was fed from the journal. */
  readonly catchUps: number;
}

/**
 * The memory the host gives every WebSocket client's queue together (`server.clientBufferBudget`). Each client may
 * have its share queued: its high-water mark (`server.clientHighWater`), or the budget split evenly when there are
 * too many clients for that. A session feed whose client has its share queued sends it no more live updates: it
 * feeds it from the journal, where every update already is, as the client reads (see SessionFeed). So what is
 * queued stays under the budget plus one message a client, however many clients stop reading.
 */
export class ClientBufferBudget {
  private readonly queues = new Set<ClientQueueSize>();
  private peak = 0;
  private catchingUp = 0;
  private catchUps = 0;

  constructor(private readonly limits: { readonly budgetBytes: number; readonly highWaterBytes: number }) {}

  /** Counts the client's queue in; the call returned counts it out (its socket closed). */
  join(queue: ClientQueueSize): () => void {
    this.queues.add(queue);
    return () => this.queues.delete(queue);
  }

  get shareBytes(): number {
    return Math.min(this.limits.highWaterBytes, Math.floor(this.limits.budgetBytes / Math.max(1, this.queues.size)));
  }

  /** A client reached its share: the total is as high as it gets then, so the peak is looked at now. */
  reached(): void {
    this.peak = Math.max(this.peak, this.queued());
  }

  /** A session feed fell behind and is fed from the journal until the call returned. */
  behind(): () => void {
    this.catchingUp++;
    this.catchUps++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.catchingUp--;
    };
  }

  figures(): ClientBufferFigures {
    const queuedBytes = this.queued();
    this.peak = Math.max(this.peak, queuedBytes);
    return {
      queuedBytes,
      peakQueuedBytes: this.peak,
      budgetBytes: this.limits.budgetBytes,
      shareBytes: this.shareBytes,
      feedsCatchingUp: this.catchingUp,
      catchUps: this.catchUps,
    };
  }

  private queued(): number {
    let total = 0;
    for (const queue of this.queues) total += queue.bufferedAmount;
    return total;
  }
}
