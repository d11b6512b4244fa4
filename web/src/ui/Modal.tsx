import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** A modal `<dialog>`: focus moves into it (and back once it closes), Escape closes it, the page behind is inert. */
export function Modal({ labelledBy, onClose, children }: { labelledBy: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const latestOnClose = useRef(onClose);
  latestOnClose.current = onClose;
  useEffect(() => {
    const dialog = ref.current!;
    // Where the person was (the prompt box they pressed Escape in): they go on there once it closes.
    const before = document.activeElement;
    // Closed from inside (Escape): the owner is told. Not for the close on unmount below: its event comes at the next
    // animation frame, when the owner may already show its next dialog, which it would then take down.
    const closedFromInside = (): void => latestOnClose.current();
    dialog.addEventListener("close", closedFromInside);
    dialog.showModal();
    return () => {
      dialog.removeEventListener("close", closedFromInside);
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
