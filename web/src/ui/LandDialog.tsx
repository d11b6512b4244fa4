import { useState } from "preact/hooks";
import { type LandRefusal, landRefusal } from "../review/land-outcome.js";
import { errorWords } from "../util/error-words.js";
import { Modal } from "./Modal.js";

type Landing =
  | { readonly name: "editing" }
  | { readonly name: "landing" }
  | { readonly name: "refused"; readonly refusal: LandRefusal }
  | { readonly name: "asking-agent" }
  | { readonly name: "asked-agent" }
  | { readonly name: "ask-failed"; readonly files: readonly string[]; readonly message: string };

/**
 * Land: the commit message (the session's title to start with), then the project's check and the merge into the base
 * run on the host. A failed check shows its output; a conflict names its files and offers to ask the agent to resolve it.
 */
export function LandDialog({
  branch,
  base,
  defaultMessage,
  onLand,
  onAskAgent,
  onClose,
}: {
  branch: string;
  base: string;
  defaultMessage: string;
  onLand: (message: string) => Promise<void>;
  /** Asks the session's agent to resolve the conflict in these files. */
  onAskAgent: (files: readonly string[]) => Promise<void>;
  onClose: () => void;
}) {
  const [message, setMessage] = useState(defaultMessage);
  const [state, setState] = useState<Landing>({ name: "editing" });
  const land = (): void => {
    setState({ name: "landing" });
    onLand(message.trim()).then(onClose, (error: unknown) => setState({ name: "refused", refusal: landRefusal(error) }));
  };
  const askAgent = (files: readonly string[]): void => {
    setState({ name: "asking-agent" });
    onAskAgent(files).then(
      () => setState({ name: "asked-agent" }),
      (error: unknown) => setState({ name: "ask-failed", files, message: errorWords(error) }),
    );
  };
  const busy = state.name === "landing" || state.name === "asking-agent";
  return (
    <Modal labelledBy="land-title" busy={busy} onClose={onClose}>
      <h2 id="land-title">Land {branch}</h2>
      <p>
        The check runs on the host; if it passes, this branch is merged into <strong>{base}</strong> as one commit and the worktree is removed.
      </p>
      <form
        class="land-form"
        onSubmit={(event) => {
          event.preventDefault();
          land();
        }}
      >
        <label class="field">
          <span>Commit message</span>
          <textarea rows={3} value={message} disabled={busy} onInput={(event) => setMessage(event.currentTarget.value)} />
        </label>
        <LandStatus state={state} onAskAgent={askAgent} />
        <div class="dialog-actions">
          <button type="button" disabled={busy} onClick={onClose}>
            {state.name === "editing" || busy ? "Cancel" : "Close"}
          </button>
          <button type="submit" class="primary" disabled={busy || message.trim() === ""}>
            {state.name === "landing" ? "Landing…" : state.name === "refused" ? "Try again" : "Land"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

function LandStatus({ state, onAskAgent }: { state: Landing; onAskAgent: (files: readonly string[]) => void }) {
  switch (state.name) {
    case "editing":
      return null;
    case "landing":
      return (
        <p class="status" role="status">
          Running the check and merging…
        </p>
      );
    case "asking-agent":
      return (
        <p class="status" role="status">
          Asking the agent…
        </p>
      );
    case "asked-agent":
      return (
        <p class="status" role="status">
          The agent was asked to resolve the conflict: its turn shows in the conversation. Land again once it is done.
        </p>
      );
    case "ask-failed":
      return (
        <div role="alert">
          <p class="error">The agent could not be asked: {state.message}</p>
          <button type="button" onClick={() => onAskAgent(state.files)}>
            Ask the agent to resolve it
          </button>
        </div>
      );
    case "refused":
      return <Refusal refusal={state.refusal} onAskAgent={onAskAgent} />;
  }
}

function Refusal({ refusal, onAskAgent }: { refusal: LandRefusal; onAskAgent: (files: readonly string[]) => void }) {
  switch (refusal.name) {
    case "check-failed":
      return (
        <div class="land-refusal" role="alert">
          <p class="error">The check failed, so nothing was landed. Its output:</p>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long output scrolls, and a keyboard scrolls it only with the focus in it */}
          <pre class="output check-output" tabIndex={0}>
            {refusal.output === "" ? "(the check printed nothing)" : refusal.output}
          </pre>
        </div>
      );
    case "conflict":
      return (
        <div class="land-refusal" role="alert">
          <p class="error">
            The branch does not merge cleanly, so nothing was landed. {refusal.files.length === 1 ? "This file conflicts:" : "These files conflict:"}
          </p>
          <ul class="conflict-files">
            {refusal.files.map((file) => (
              <li key={file} class="path">
                {file}
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => onAskAgent(refusal.files)}>
            Ask the agent to resolve it
          </button>
        </div>
      );
    case "refused":
      return (
        <p class="error" role="alert">
          Not landed: {refusal.message}
        </p>
      );
  }
}
