import type { Clock, Timer } from "./clock.js";
import { MinHeap } from "./min-heap.js";

/** A key's deadline, and the one place it holds in the queue (if any); times are the clock's `elapsed()`. */
interface Slot<K> {
  readonly key: K;
  /** When the key is due; undefined once cleared. */
  dueAt: number | undefined;
  /** The time of the key's live place in the queue; undefined when it has none. */
  queuedAt: number | undefined;
}

interface Place<K> {
  readonly slot: Slot<K>;
  readonly at: number;
}

/**
 * Many deadlines on one clock timer: `onDue(key)` runs once a key's deadline has passed, in deadline order (ties in
 * any order). Why: a session's release clock is armed and cancelled each time its last holder leaves and another comes,
 * and a system timer each time costs more than the rest of a hold. Here setting and clearing only write the key's slot;
 * a deadline moved later keeps its place and is queued again when that place comes up, so the queue holds at most one
 * live place per key, and a cleared key's place until its time (or until no key has a deadline). Deadlines are kept
 * on the clock's `elapsed()`, as a timer counts: a step of the wall clock moves none.
 */
export class Deadlines<K> {
  private readonly slots = new Map<K, Slot<K>>();
  private readonly queue = new MinHeap<Place<K>>((a, b) => a.at < b.at);
  /** Keys with a deadline: when none is left, the timer and every place go at once. */
  private live = 0;
  private timer: { readonly handle: Timer; readonly at: number } | undefined;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (key: K) => void,
  ) {}

  /** Sets (or moves) `key`'s deadline to `delayMs` from now. */
  set(key: K, delayMs: number): void {
    if (this.closed) return;
    const dueAt = this.clock.elapsed() + delayMs;
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { key, dueAt: undefined, queuedAt: undefined };
      this.slots.set(key, slot);
    }
    if (slot.dueAt === undefined) this.live++;
    slot.dueAt = dueAt;
    // A later deadline keeps the place it has; an earlier one (or none yet) takes a new place.
    if (slot.queuedAt === undefined || dueAt < slot.queuedAt) this.enqueue(slot, dueAt);
  }

  /** `key` has no deadline any more; its place, if any, is dropped when it comes up. */
  clear(key: K): void {
    const slot = this.slots.get(key);
    if (slot?.dueAt === undefined) return;
    slot.dueAt = undefined;
    if (--this.live === 0) this.dropAll();
  }

  /** When `key` is due, on the clock's `elapsed()`, if it has a deadline. */
  dueAt(key: K): number | undefined {
    return this.slots.get(key)?.dueAt;
  }

  /** Places in the queue, live or left by a cleared or moved deadline. */
  get queued(): number {
    return this.queue.size;
  }

  /** Keys known: those with a deadline or a place in the queue. */
  get tracked(): number {
    return this.slots.size;
  }

  /** Nothing fires any more. */
  close(): void {
    this.closed = true;
    this.dropAll();
  }

  private enqueue(slot: Slot<K>, at: number): void {
    slot.queuedAt = at;
    this.queue.push({ slot, at });
    this.armFor(at);
  }

  /** The timer fires at `at` or sooner. */
  private armFor(at: number): void {
    if (this.timer !== undefined && this.timer.at <= at) return;
    this.timer?.handle.cancel();
    const handle = this.clock.setTimeout(() => this.fire(), at - this.clock.elapsed());
    this.timer = { handle, at };
  }

  private fire(): void {
    this.timer = undefined;
    try {
      this.runDue(this.clock.elapsed());
    } finally {
      // Even if a key's `onDue` threw (its error goes on to the clock): the keys left stay queued, the timer armed for them.
      if (this.live === 0) this.dropAll();
      else if (!this.closed) this.armFor(this.queue.peek()!.at);
    }
  }

  private runDue(now: number): void {
    for (let top = this.queue.peek(); top !== undefined && top.at <= now; top = this.queue.peek()) {
      this.queue.pop();
      const slot = top.slot;
      // A place left behind when the deadline was moved earlier: the slot's live place is elsewhere.
      if (slot.queuedAt !== top.at) continue;
      slot.queuedAt = undefined;
      if (slot.dueAt === undefined) {
        this.slots.delete(slot.key);
      } else if (slot.dueAt > now) {
        this.enqueue(slot, slot.dueAt);
      } else {
        this.slots.delete(slot.key);
        this.live--;
        // Run last: `onDue` may set the same key again, or close.
        this.onDue(slot.key);
        if (this.closed) return;
      }
    }
  }

  private dropAll(): void {
    this.live = 0;
    this.timer?.handle.cancel();
    this.timer = undefined;
    this.slots.clear();
    this.queue.clear();
  }
}
