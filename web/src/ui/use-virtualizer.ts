import { elementScroll, observeElementOffset, observeElementRect, Virtualizer, type VirtualizerOptions } from "@tanstack/virtual-core";
import { useLayoutEffect, useReducer, useState } from "preact/hooks";

type Options = Omit<VirtualizerOptions<HTMLDivElement, HTMLDivElement>, "observeElementRect" | "observeElementOffset" | "scrollToFn" | "onChange">;

/** `@tanstack/virtual-core` for Preact: the instance lives with the component, which renders again when it changes. */
export function useVirtualizer(options: Options): Virtualizer<HTMLDivElement, HTMLDivElement> {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const resolved: VirtualizerOptions<HTMLDivElement, HTMLDivElement> = {
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    ...options,
    onChange: () => rerender(0),
  };
  const [instance] = useState(() => new Virtualizer(resolved));
  instance.setOptions(resolved);
  useLayoutEffect(() => instance._didMount(), [instance]);
  useLayoutEffect(() => instance._willUpdate());
  return instance;
}
