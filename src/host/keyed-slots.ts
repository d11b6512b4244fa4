/** A slot held: give it back once, when the work is done. */
export type FreeSlot = () => void;

interface Waiter {
  readonly grant: (free: FreeSlot) => void;
}

/**
 * At most `size` holders per key at once; the others wait in the order they asked, until a slot frees or their signal
 * aborts. Bounds what a burst of requests can start (one agent process per request outside sessions).
 */
export class KeyedSlots {
  private readonly holders = new Map<string, number>();
  private readonly queues = new Map<string, Waiter[]>();

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots per key must be a whole number of at least 1, not ${size}`);
  }

  /** Resolves with the slot once one is free for `key`; rejects with the signal's reason if it aborts first. */
  take(key: string, signal?: AbortSignal): Promise<FreeSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if ((this.holders.get(key) ?? 0) < this.size) return Promise.resolve(this.hold(key));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (free) => {
          signal?.removeEventListener("abort", abandon);
          resolve(free);
        },
      };
      const abandon = () => {
        this.leaveQueue(key, waiter);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", abandon, { once: true });
      const queue = this.queues.get(key) ?? [];
      queue.push(waiter);
      this.queues.set(key, queue);
    });
  }

  /** Slots held and requests waiting for `key`, for logs and tests. */
  count(key: string): { readonly holding: number; readonly waiting: number } {
    return { holding: this.holders.get(key) ?? 0, waiting: this.queues.get(key)?.length ?? 0 };
  }

  private hold(key: string): FreeSlot {
    this.holders.set(key, (this.holders.get(key) ?? 0) + 1);
    return this.freeOnce(key);
  }

  private freeOnce(key: string): FreeSlot {
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.free(key);
    };
  }

  private free(key: string): void {
    const queue = this.queues.get(key);
    const next = queue?.shift();
    if (queue?.length === 0) this.queues.delete(key);
    // The slot passes straight to the next in line: as many are held as before.
    if (next) return next.grant(this.freeOnce(key));
    const holding = (this.holders.get(key) ?? 1) - 1;
    if (holding === 0) this.holders.delete(key);
    else this.holders.set(key, holding);
  }

  private leaveQueue(key: string, waiter: Waiter): void {
    const queue = this.queues.get(key);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.queues.delete(key);
  }
}
