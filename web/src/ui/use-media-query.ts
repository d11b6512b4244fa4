import { useEffect, useState } from "preact/hooks";

/** A screen that is touched or narrow: no physical keyboard to be expected, so no keyboard hints. */
export const touchOrNarrow = "(pointer: coarse), (hover: none), (max-width: 600px)";

/** Whether the media query matches now, following its changes (a window resized, a keyboard attached). */
export function useMediaQuery(query: string): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const list = window.matchMedia(query);
    const changed = (): void => setMatches(list.matches);
    changed();
    list.addEventListener("change", changed);
    return () => list.removeEventListener("change", changed);
  }, [query]);
  return matches;
}
