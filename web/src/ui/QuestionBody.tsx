import type { PermissionOption } from "@agentclientprotocol/sdk";
import type { QuestionAnswer } from "../api/types.js";
import { ElicitationForm } from "./ElicitationForm.js";
import { QuestionLink } from "./AgentLink.js";
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
  questionId,
  kind,
  request,
  idPrefix,
  busy,
  onAnswer,
}: {
  questionId: string;
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
      {typeof url === "string" ? <QuestionLink idPrefix={idPrefix} url={url} /> : null}
      <ElicitationForm
        questionId={questionId}
        idPrefix={idPrefix}
        schema={requestedSchema}
        disabled={busy}
        onAccept={(content) => onAnswer({ action: "accept", content })}
        onDecline={() => onAnswer({ action: "decline" })}
      />
    </>
  );
}
