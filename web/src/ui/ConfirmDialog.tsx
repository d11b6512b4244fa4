import { errorWords } from "../util/error-words.js";
import { useState } from "preact/hooks";
import { Modal } from "./Modal.js";

type Confirming = { readonly name: "asking" } | { readonly name: "working" } | { readonly name: "failed"; readonly message: string };

/** Asks before something that cannot be undone (a deletion, cancelling a turn); shows why it failed if it did. */
export function ConfirmDialog({
  title,
  body,
  confirmLabel,
  workingLabel,
  onConfirm,
  onClose,
}: {
  title: string;
  body: string;
  confirmLabel: string;
  /** The confirm button's words while it works ("Deleting…"). */
  workingLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [state, setState] = useState<Confirming>({ name: "asking" });
  const confirm = (): void => {
    setState({ name: "working" });
    onConfirm().then(onClose, (error: unknown) => setState({ name: "failed", message: errorWords(error) }));
  };
  return (
    <Modal labelledBy="confirm-title" busy={state.name === "working"} onClose={onClose}>
      <h2 id="confirm-title">{title}</h2>
      <p>{body}</p>
      {state.name === "failed" ? (
        <p class="error" role="alert">
          {state.message}
        </p>
      ) : null}
      <div class="dialog-actions">
        {/* Once asked, it is not taken back: the dialog stays until it is done or failed. */}
        <button type="button" disabled={state.name === "working"} onClick={onClose}>
          Keep it
        </button>
        <button type="button" class="danger" disabled={state.name === "working"} onClick={confirm}>
          {state.name === "working" ? workingLabel : confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
