import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** A modal `<dialog>`: focus moves into it, Escape closes it, the page behind is inert. */
export function Modal({ labelledBy, onClose, children }: { labelledBy: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    return () => dialog.close();
  }, []);
  return (
    <dialog ref={ref} class="modal" aria-labelledby={labelledBy} onClose={onClose}>
      {children}
    </dialog>
  );
}
