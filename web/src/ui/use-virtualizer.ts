import { elementScroll, observeElementOffset, observeElementRect, Virtualizer, type VirtualizerOptions } from "@tanstack/virtual-core";
import { useLayoutEffect, useState } from "preact/hooks";

type Options = Omit<VirtualizerOptions<HTMLDivElement, HTMLDivElement>, "observeElementRect" | "observeElementOffset" | "scrollToFn" | "onChange">;

/**
 * `@tanstack/virtual-core` for Preact: the instance lives with the component, which renders again
 * when it changes, with the next frame (`renderNextFrame`) together with whatever else changed in
 * it: a scroll, rows measured and new text are rendered and laid out once a frame, not each on its
 * own (a scroll event's render used to force a layout of its own before the frame's). A scroll's
 * events come before the frame's animation callbacks, so the range it brings into view is still
 * rendered before that frame is painted.
 */
export function useVirtualizer(options: Options, renderNextFrame: () => void): Virtualizer<HTMLDivElement, HTMLDivElement> {
  const resolved: VirtualizerOptions<HTMLDivElement, HTMLDivElement> = {
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    ...options,
    onChange: renderNextFrame,
  };
  const [instance] = useState(() => new Virtualizer(resolved));
  instance.setOptions(resolved);
  useLayoutEffect(() => instance._didMount(), [instance]);
  useLayoutEffect(() => instance._willUpdate());
  return instance;
}
