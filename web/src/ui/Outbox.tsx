import { useEffect, useRef, useState } from "preact/hooks";
import type { ChatSession } from "../chat/chat-session.js";
import type { Outbox as OutboxList, OutgoingMessage } from "../chat/outbox.js";

/** Messages typed here that the conversation does not show yet: queued (editable until they go), being sent, or refused. */
export function Outbox({ outbox, turnRunning, chat }: { outbox: OutboxList; turnRunning: boolean; chat: ChatSession }) {
  const shown = outbox.filter((message) => message.state !== "started");
  if (shown.length === 0) return null;
  return (
    <ol class="outbox" aria-label="Messages not sent yet">
      {shown.map((message) =>
        message.state === "editing" ? (
          <EditedMessage key={message.id} message={message} chat={chat} />
        ) : (
          <li key={message.id} class={`outgoing ${message.state}`}>
            <span class="outgoing-state">{stateText(message, turnRunning)}</span>
            <span class="outgoing-text">{message.text}</span>
            <span class="outgoing-actions">
              {message.state === "queued" && turnRunning ? (
                // Like the header's Cancel turn: nothing can be stopped while Berth is out of reach.
                <button type="button" disabled={!chat.canCancel()} onClick={() => chat.stopAndSend(message.id)}>
                  Stop and send
                </button>
              ) : null}
              {message.state === "queued" ? (
                <button type="button" onClick={() => chat.edit(message.id)}>
                  Edit
                </button>
              ) : null}
              {message.state === "failed" ? (
                <button type="button" onClick={() => chat.retry(message.id)}>
                  Retry
                </button>
              ) : null}
              {message.state !== "sending" ? (
                <button
                  type="button"
                  class="quiet"
                  onClick={() => {
                    chat.discard(message.id);
                    focusMessageBox();
                  }}
                >
                  Remove
                </button>
              ) : null}
            </span>
          </li>
        ),
      )}
    </ol>
  );
}

/** A queued message being edited: held back until saved (Enter) or left as it was (Escape). */
function EditedMessage({ message, chat }: { message: OutgoingMessage; chat: ChatSession }) {
  const [text, setText] = useState(message.text);
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, []);
  const fieldId = `outgoing-edit-${message.id}`;
  // The element that had the focus is gone with the edit: the message box takes it.
  const finish = (edited: string | null) => {
    chat.finishEdit(message.id, edited);
    focusMessageBox();
  };
  const remove = () => {
    chat.discard(message.id);
    focusMessageBox();
  };
  return (
    <li class="outgoing editing">
      <form
        class="outgoing-edit"
        onSubmit={(event) => {
          event.preventDefault();
          finish(text);
        }}
      >
        <label for={fieldId} class="outgoing-state">
          {stateText(message, false)}
        </label>
        <textarea
          id={fieldId}
          ref={field}
          rows={2}
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
              event.preventDefault();
              finish(text);
            } else if (event.key === "Escape") {
              // Gives up the edit; not the page's Escape (which would offer to cancel the turn).
              event.preventDefault();
              finish(null);
            }
          }}
        />
        <span class="outgoing-actions">
          <button type="submit" class="primary">
            Save
          </button>
          <button type="button" onClick={() => finish(null)}>
            Keep as it was
          </button>
          <button type="button" class="quiet" onClick={remove}>
            Remove
          </button>
        </span>
      </form>
    </li>
  );
}

/**
 * Once the outbox has rendered again, the message box has the focus (a queued message's buttons come and go as it
 * is sent), unless something else took it meanwhile.
 */
function focusMessageBox(): void {
  setTimeout(() => {
    // The message box's id is PromptBox's.
    if (document.activeElement === null || document.activeElement === document.body) document.getElementById("prompt-text")?.focus();
  });
}

function stateText(message: OutgoingMessage, turnRunning: boolean): string {
  switch (message.state) {
    case "queued":
      return turnRunning ? "Queued: sends when the turn ends" : "Queued";
    case "editing":
      return "Editing: held until saved";
    case "sending":
      return "Sending…";
    case "failed":
      return `Not sent: ${message.error ?? "refused"}`;
    case "started":
      return "";
  }
}
