import { afterEach, describe, expect, it } from "vitest";
import { Reconnector, type ReconnectClock, type ResumeTo } from "../../web/src/chat/reconnector.js";
import type { Reconnection } from "../../web/src/live/reconnection.js";

/** A clock moved by hand: timers run when it passes their time. */
class HandClock implements ReconnectClock {
  private time = 1_000;
  private timers: { at: number; run: () => void }[] = [];
  now(): number {
    return this.time;
  }
  after(ms: number, run: () => void): () => void {
    const timer = { at: this.time + ms, run };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }
  random(): number {
    return 0.5;
  }
  pending(): number {
    return this.timers.length;
  }
  advance(ms: number): void {
    this.time += ms;
    for (const timer of this.timers.filter((t) => t.at <= this.time)) {
      this.timers = this.timers.filter((t) => t !== timer);
      timer.run();
    }
  }
}

const network = new EventTarget();
let reconnector: Reconnector | undefined;
afterEach(() => reconnector?.stop());

function started(): { clock: HandClock; attempts: { resumeTo: ResumeTo; reconnection: Reconnection }[]; reconnector: Reconnector } {
  const clock = new HandClock();
  const attempts: { resumeTo: ResumeTo; reconnection: Reconnection }[] = [];
  reconnector = new Reconnector((resumeTo, reconnection) => attempts.push({ resumeTo, reconnection }), clock, network);
  return { clock, attempts, reconnector };
}

describe("the chat's reconnector", () => {
  it("makes the first attempt 0.5 s after a loss, going back to where the page was", () => {
    const { clock, attempts, reconnector } = started();
    expect(reconnector.lost("live", "socket closed")).toMatchObject({ name: "waiting", attempt: 1, retryAt: 1_500, reason: "socket closed" });
    clock.advance(499);
    expect(attempts).toEqual([]);
    clock.advance(1);
    expect(attempts).toEqual([{ resumeTo: "live", reconnection: { name: "trying", attempt: 1, since: 1_000, reason: "socket closed" } }]);
    expect(reconnector.reconnection.name).toBe("trying");
  });

  it("takes a loss told twice as one, and waits twice as long after each failed attempt", () => {
    const { clock, attempts, reconnector } = started();
    reconnector.lost("reading", "refused");
    expect(reconnector.lost("reading", "refused again")).toBeNull();
    expect(clock.pending()).toBe(1);
    clock.advance(500);
    expect(reconnector.lost("reading", "still refused")).toMatchObject({ attempt: 2, retryAt: 2_500 });
    clock.advance(1_000);
    expect(reconnector.lost("reading", "still refused")).toMatchObject({ attempt: 3, retryAt: 4_500, since: 1_000 });
    clock.advance(2_000);
    expect(attempts.map((a) => a.reconnection)).toMatchObject([{ attempt: 1 }, { attempt: 2 }, { attempt: 3 }]);
  });

  it("starts again from the first delay once an attempt worked", () => {
    const { clock, reconnector } = started();
    expect(reconnector.reached()).toBe(false);
    reconnector.lost("live", "lost");
    clock.advance(500);
    reconnector.lost("live", "lost");
    clock.advance(1_000);
    expect(reconnector.reached()).toBe(true);
    expect(reconnector.reconnection).toEqual({ name: "connected" });
    expect(reconnector.lost("live", "lost")).toMatchObject({ attempt: 1, retryAt: clock.now() + 500 });
  });

  it("tries at once when the network comes back or the person asks, and only when an attempt is due", () => {
    const { clock, attempts, reconnector } = started();
    network.dispatchEvent(new Event("online"));
    reconnector.retryNow();
    expect(attempts).toEqual([]);
    reconnector.lost("reading", "offline");
    network.dispatchEvent(new Event("online"));
    expect(attempts).toHaveLength(1);
    expect(clock.pending()).toBe(0);
    reconnector.lost("reading", "offline");
    reconnector.retryNow();
    expect(attempts.map((a) => a.reconnection)).toMatchObject([{ attempt: 1 }, { attempt: 2 }]);
  });

  it("makes no attempt once stopped, and no longer listens to the network", () => {
    const { clock, attempts, reconnector } = started();
    reconnector.lost("live", "lost");
    reconnector.stop();
    expect(clock.pending()).toBe(0);
    clock.advance(60_000);
    network.dispatchEvent(new Event("online"));
    expect(reconnector.lost("live", "lost")).toBeNull();
    expect(reconnector.reached()).toBe(false);
    expect(attempts).toEqual([]);
  });
});
