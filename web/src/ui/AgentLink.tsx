import { useState } from "preact/hooks";
import { webAddress } from "./links.js";
import { Modal } from "./Modal.js";

/**
 * Leaving the dashboard for an address an agent gave, in one way wherever it gave it: a link in its
 * Markdown or a URL-mode elicitation. Only http(s), and only after the person saw the whole address
 * and its host; anything else is shown and never opened.
 */

/** The link of a URL-mode elicitation (Berth itself refuses those: this is the page's own guard). */
export function QuestionLink({ idPrefix, url }: { idPrefix: string; url: string }) {
  const [confirming, setConfirming] = useState(false);
  const address = webAddress(url);
  if (!address) return <NotAWebPage url={url} testId={`${idPrefix}-link-refused`} />;
  if (!confirming) {
    return (
      <p class="agent-link">
        <button type="button" onClick={() => setConfirming(true)}>
          Open the agent's link…
        </button>
      </p>
    );
  }
  return (
    <div class="agent-link" role="group" aria-label="Open the agent's link">
      <ConfirmAddress address={address} onDone={() => setConfirming(false)} />
    </div>
  );
}

/** A link in the agent's text was followed: asks first, in a dialog. */
export function AgentLinkDialog({ url, onClose }: { url: string; onClose: () => void }) {
  const address = webAddress(url);
  return (
    <Modal labelledBy="agent-link-title" onClose={onClose}>
      <h2 id="agent-link-title">Open the agent's link?</h2>
      {address ? (
        <ConfirmAddress address={address} onDone={onClose} />
      ) : (
        <>
          <NotAWebPage url={url} testId="agent-link-refused" />
          <div class="dialog-actions">
            <button type="button" onClick={onClose}>
              Close
            </button>
          </div>
        </>
      )}
    </Modal>
  );
}

function ConfirmAddress({ address, onDone }: { address: URL; onDone: () => void }) {
  return (
    <>
      <p>
        The agent's link leads to a page on <strong>{address.host}</strong>: <code class="link-address">{address.href}</code>
      </p>
      <p class="choices">
        <a class="button" href={address.href} target="_blank" rel="noreferrer noopener" onClick={onDone}>
          Open {address.host}
        </a>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </p>
    </>
  );
}

function NotAWebPage({ url, testId }: { url: string; testId: string }) {
  return (
    <p class="muted agent-link" data-testid={testId}>
      The agent sent an address that is not a web page; it is not opened: <code class="link-address">{url}</code>
    </p>
  );
}
