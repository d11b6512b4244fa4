import type { Clock, Timer } from "../../src/lifecycle/clock.js";
import { MinHeap } from "../../src/lifecycle/min-heap.js";
import { drainMicrotasks } from "./model-budget.js";

interface PendingTimer {
  readonly dueAt: number;
  readonly order: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/**
 * The model tests' clock: the virtual clock's semantics (due timers in deadline order, ties in
 * creation order, promise work settled after each), but it settles microtasks only. The kernel
 * has no I/O, so that is all it needs, and thousands of interleavings run in seconds.
 */
export class MicroClock implements Clock {
  private current: number;
  private nextOrder = 0;
  private live = 0;
  private readonly heap = new MinHeap<PendingTimer>((a, b) => a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.order < b.order));

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): Timer {
    const timer: PendingTimer = { dueAt: this.current + Math.max(0, delayMs), order: this.nextOrder++, callback, cancelled: false };
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

  pendingTimers(): number {
    return this.live;
  }

  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await drainMicrotasks();
    for (;;) {
      const top = this.heap.peek();
      if (!top) break;
      if (top.cancelled) {
        this.heap.pop();
        continue;
      }
      if (top.dueAt > target) break;
      this.heap.pop();
      this.current = Math.max(this.current, top.dueAt);
      top.cancelled = true;
      this.live--;
      top.callback();
      await drainMicrotasks();
    }
    this.current = Math.max(this.current, target);
  }
}
