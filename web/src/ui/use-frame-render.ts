import { useEffect, useReducer, useState } from "preact/hooks";

/**
 * A function that renders the component again at the next animation frame: called any number of
 * times before it, one render. What changes many times a frame (chunks of a long reply, the range
 * a scroll brings into view, rows measured) is rendered and laid out once per frame, not once per change.
 */
export function useFrameRender(): () => void {
  const [, bump] = useReducer((n: number) => n + 1, 0);
  const [frame] = useState(() => ({ id: 0 }));
  const [schedule] = useState(() => (): void => {
    frame.id ||= requestAnimationFrame(() => {
      frame.id = 0;
      bump(0);
    });
  });
  useEffect(() => () => cancelAnimationFrame(frame.id), [frame]);
  return schedule;
}
