import type { Clock, Timer } from "./clock.js";
import { MinHeap } from "./min-heap.js";

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
 * `settleRounds` is how many event-loop turns that settling takes: the default
 * lets work on real child processes and sockets catch up; the model tests, which
 * drive the kernel alone (no I/O), need one, and run thousands of interleavings fast.
 */
export class VirtualClock implements Clock {
  private current: number;
  private nextOrder = 0;
  private live = 0;
  /** Cancelled timers are dropped lazily when they surface. */
  private readonly heap = new MinHeap<PendingTimer>(earlier);

  constructor(
    start = Date.UTC(2026, 0, 1),
    private readonly settleRounds = 3,
  ) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** Virtual time never steps: the same as {@link now}. */
  elapsed(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): Timer {
    const timer: PendingTimer = {
      dueAt: this.current + Math.max(0, delayMs),
      order: this.nextOrder++,
      callback,
      cancelled: false,
    };
    this.heap.push(timer);
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
    await settlePromises(this.settleRounds);
    for (let next = this.popDue(target); next; next = this.popDue(target)) await this.fire(next);
    this.current = Math.max(this.current, target);
  }

  private async fire(timer: PendingTimer): Promise<void> {
    this.current = Math.max(this.current, timer.dueAt);
    timer.cancelled = true;
    this.live--;
    timer.callback();
    await settlePromises(this.settleRounds);
  }

  private popDue(limit: number): PendingTimer | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (!top) return undefined;
      if (top.cancelled) {
        this.heap.pop();
        continue;
      }
      return top.dueAt <= limit ? this.heap.pop() : undefined;
    }
  }
}
