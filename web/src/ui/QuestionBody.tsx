import type { PermissionOption } from "@agentclientprotocol/sdk";
import { useState } from "preact/hooks";
import type { QuestionAnswer } from "../api/types.js";
import { ElicitationForm } from "./ElicitationForm.js";
import { webAddress } from "./links.js";
import { PermissionChoices } from "./PermissionChoices.js";

interface PermissionRequest {
  readonly toolCall?: { readonly title?: string | null; readonly kind?: string | null };
  readonly options?: readonly PermissionOption[];
}

interface FormRequest {
  readonly message?: string;
  readonly requestedSchema?: unknown;
  /** URL-mode elicitations send the person to a page instead of asking for fields. */
  readonly url?: unknown;
}

/**
 * What an agent asked and the controls to answer it. The same for a question that arrived over ACP
 * (in a chat) and one listed over REST (the Questions panel): both carry the agent's request as is.
 */
export function QuestionBody({
  kind,
  request,
  idPrefix,
  busy,
  onAnswer,
}: {
  kind: "permission" | "elicitation";
  request: unknown;
  idPrefix: string;
  busy: boolean;
  onAnswer: (answer: QuestionAnswer) => void;
}) {
  if (kind === "permission") {
    const { toolCall, options = [] } = (request ?? {}) as PermissionRequest;
    return (
      <>
        <p class="question-text">{toolCall?.title ?? "The agent asks for permission to go ahead."}</p>
        <PermissionChoices options={options} disabled={busy} onChoose={(optionId) => onAnswer({ optionId })} />
      </>
    );
  }
  const { message, requestedSchema, url } = (request ?? {}) as FormRequest;
  return (
    <>
      <p class="question-text">{message ?? "The agent asks for some information."}</p>
      {typeof url === "string" ? <AgentLink idPrefix={idPrefix} url={url} /> : null}
      <ElicitationForm
        idPrefix={idPrefix}
        schema={requestedSchema}
        disabled={busy}
        onAccept={(content) => onAnswer({ action: "accept", content })}
        onDecline={() => onAnswer({ action: "decline" })}
      />
    </>
  );
}

/**
 * A link an agent asked the person to open (URL-mode elicitation; Berth itself refuses those, this is
 * the page's own guard). Only http(s), and only after the person saw the whole address and its host.
 */
function AgentLink({ idPrefix, url }: { idPrefix: string; url: string }) {
  const [confirming, setConfirming] = useState(false);
  const address = webAddress(url);
  if (!address) {
    return (
      <p class="muted agent-link" data-testid={`${idPrefix}-link-refused`}>
        The agent sent an address that is not a web page; it is not opened: <code>{url}</code>
      </p>
    );
  }
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
      <p>
        The agent asks you to open a page on <strong>{address.host}</strong>: <code>{address.href}</code>
      </p>
      <p class="choices">
        <a class="button" href={address.href} target="_blank" rel="noreferrer noopener" onClick={() => setConfirming(false)}>
          Open {address.host}
        </a>
        <button type="button" onClick={() => setConfirming(false)}>
          Cancel
        </button>
      </p>
    </div>
  );
}
