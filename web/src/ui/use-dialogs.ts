import { useRef, useState } from "preact/hooks";

type NoDialog = { readonly name: "none" };
const NONE: NoDialog = { name: "none" };

/** A view's one dialog at a time; each opening is an object of its own, told apart from an earlier one of its kind. */
export interface Dialogs<D> {
  readonly shown: D | NoDialog;
  open(dialog: D): void;
  /** Closes `which` if it is still shown: an action that ends after its dialog was closed (and another opened) leaves the other open. */
  close(which: D | NoDialog): void;
  /** Whether `which` is shown, as of the last render. */
  stillShown(which: D | NoDialog): boolean;
}

export function useDialogs<D extends { readonly name: string }>(): Dialogs<D> {
  const [shown, setShown] = useState<D | NoDialog>(NONE);
  const latest = useRef(shown);
  latest.current = shown;
  return {
    shown,
    open: setShown,
    close: (which) => setShown((now) => (now === which ? NONE : now)),
    stillShown: (which) => latest.current === which,
  };
}
