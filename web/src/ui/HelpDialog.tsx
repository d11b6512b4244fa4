import { Modal } from "./Modal.js";
import { shortcuts } from "./shortcuts.js";

/** The keyboard shortcuts (opened with `?`). */
export function HelpDialog({ onClose }: { onClose: () => void }) {
  return (
    <Modal labelledBy="help-title" onClose={onClose}>
      <h2 id="help-title">Keyboard shortcuts</h2>
      <table class="shortcuts">
        <tbody>
          {shortcuts.map((shortcut) => (
            <tr key={shortcut.action}>
              <th scope="row">
                {shortcut.keys.map((key) => (
                  <kbd key={key}>{key}</kbd>
                ))}
              </th>
              <td>{shortcut.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        Letters act when no text field has the focus. Enter sends a prompt, Shift+Enter starts a new line. Typing / first lists the agent's commands:
        ↑ and ↓ choose, Enter or Tab puts it in, Esc closes the list.
      </p>
      <div class="dialog-actions">
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </Modal>
  );
}
