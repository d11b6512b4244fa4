import type { Clock, Timer } from "./clock.js";

interface PendingTimer {
  readonly dueAt: number;
  readonly order: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/** Lets every promise chain that is not waiting on real I/O run to completion. */
export async function settlePromises(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function earlier(a: PendingTimer, b: PendingTimer): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.order < b.order);
}

/**
 * A clock that only moves when told to. `advance` runs due timers in deadline
 * order (ties in creation order) and lets pending promise work settle after
 * each one, so "advance 63 minutes, then assert" means what it says.
 */
export class VirtualClock implements Clock {
  private current: number;
  private nextOrder = 0;
  private live = 0;
  /** Binary min-heap; cancelled timers are dropped lazily when they surface. */
  private readonly heap: PendingTimer[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): Timer {
    const timer: PendingTimer = {
      dueAt: this.current + Math.max(0, delayMs),
      order: this.nextOrder++,
      callback,
      cancelled: false,
    };
    this.push(timer);
    this.live++;
    return {
      cancel: () => {
        if (timer.cancelled) return;
        timer.cancelled = true;
        this.live--;
      },
    };
  }

  /** Number of timers that have neither fired nor been cancelled. */
  pendingTimers(): number {
    return this.live;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.current + ms);
  }

  async advanceTo(target: number): Promise<void> {
    await settlePromises();
    for (let next = this.popDue(target); next; next = this.popDue(target)) await this.fire(next);
    this.current = Math.max(this.current, target);
  }

  /** Fires the earliest pending timer, whatever its deadline; false if there is none. */
  async runNext(): Promise<boolean> {
    const next = this.popDue(Number.POSITIVE_INFINITY);
    if (!next) return false;
    await this.fire(next);
    return true;
  }

  private async fire(timer: PendingTimer): Promise<void> {
    this.current = Math.max(this.current, timer.dueAt);
    timer.cancelled = true;
    this.live--;
    timer.callback();
    await settlePromises();
  }

  private popDue(limit: number): PendingTimer | undefined {
    for (;;) {
      const top = this.heap[0];
      if (!top) return undefined;
      if (top.cancelled) {
        this.pop();
        continue;
      }
      return top.dueAt <= limit ? this.pop() : undefined;
    }
  }

  private push(timer: PendingTimer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): PendingTimer | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && earlier(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && earlier(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }
}
