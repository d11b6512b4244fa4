import { useEffect } from "preact/hooks";
import { Observable, useObservable } from "./observable.js";

const now = new Observable(Date.now());
let ticker: number | undefined;
let viewers = 0;

/**
 * The current time, re-rendering once a second while some view shows a countdown. One shared ticker
 * for the whole page, running only while a countdown is on screen; it never fetches anything.
 */
export function useNow(): number {
  useEffect(() => {
    if (viewers++ === 0) {
      now.set(Date.now());
      ticker = window.setInterval(() => now.set(Date.now()), 1000);
    }
    return () => {
      if (--viewers === 0) window.clearInterval(ticker);
    };
  }, []);
  return useObservable(now);
}
