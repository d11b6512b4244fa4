import { useEffect, useState } from "preact/hooks";

/** A value that views re-render on: the one state container of the dashboard. */
export class Observable<T> {
  private readonly listeners = new Set<() => void>();

  constructor(private current: T) {}

  get value(): T {
    return this.current;
  }

  set(next: T): void {
    if (Object.is(next, this.current)) return;
    this.current = next;
    for (const listener of [...this.listeners]) listener();
  }

  update(change: (current: T) => T): void {
    this.set(change(this.current));
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function useObservable<T>(observable: Observable<T>): T {
  const [, rerender] = useState(0);
  const rendered = observable.value;
  useEffect(() => {
    const unsubscribe = observable.subscribe(() => rerender((n) => n + 1));
    // Effects run after the paint: a change made between the render and the subscription
    // (a chat that opened meanwhile) would otherwise show only with the next one.
    if (!Object.is(observable.value, rendered)) rerender((n) => n + 1);
    return unsubscribe;
  }, [observable]);
  return rendered;
}
