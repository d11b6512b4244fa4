import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/**
 * A modal `<dialog>`: focus moves into it (and back once it closes), Escape closes it, the page behind is inert.
 * While `busy` (its action under way, which closing would not stop) Escape leaves it open.
 */
export function Modal({
  labelledBy,
  busy = false,
  onClose,
  children,
}: {
  labelledBy: string;
  busy?: boolean;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const latestOnClose = useRef(onClose);
  latestOnClose.current = onClose;
  const latestBusy = useRef(busy);
  latestBusy.current = busy;
  useEffect(() => {
    const dialog = ref.current!;
    // Where the person was (the prompt box they pressed Escape in): they go on there once it closes.
    const before = document.activeElement;
    // Closed from inside (Escape): the owner is told. Not for the close on unmount below: its event comes at the next
    // animation frame, when the owner may already show its next dialog, which it would then take down.
    const closedFromInside = (): void => latestOnClose.current();
    // The browser may still close it on a second Escape (no cancel without a click since): owners check which dialog closes.
    const keepWhileBusy = (event: Event): void => {
      if (latestBusy.current) event.preventDefault();
    };
    dialog.addEventListener("close", closedFromInside);
    dialog.addEventListener("cancel", keepWhileBusy);
    dialog.showModal();
    return () => {
      dialog.removeEventListener("close", closedFromInside);
      dialog.removeEventListener("cancel", keepWhileBusy);
      // Unless the focus went on elsewhere meanwhile (a chat's message box, opened by the dialog).
      const stayed = document.activeElement === null || document.activeElement === document.body || dialog.contains(document.activeElement);
      dialog.close();
      if (stayed && before instanceof HTMLElement && before.isConnected) before.focus();
    };
  }, []);
  return (
    <dialog ref={ref} class="modal" aria-labelledby={labelledBy}>
      {children}
    </dialog>
  );
}
