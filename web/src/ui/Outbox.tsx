import type { ChatSession } from "../chat/chat-session.js";
import type { Outbox as OutboxList, OutgoingMessage } from "../chat/outbox.js";

/** Messages typed here that the conversation does not show yet: queued, being sent, or refused. */
export function Outbox({ outbox, turnRunning, chat }: { outbox: OutboxList; turnRunning: boolean; chat: ChatSession }) {
  const shown = outbox.filter((message) => message.state !== "started");
  if (shown.length === 0) return null;
  return (
    <ol class="outbox" aria-label="Messages not sent yet">
      {shown.map((message) => (
        <li key={message.id} class={`outgoing ${message.state}`}>
          <span class="outgoing-state">{stateText(message, turnRunning)}</span>
          <span class="outgoing-text">{message.text}</span>
          <span class="outgoing-actions">
            {message.state === "queued" && turnRunning ? (
              <button type="button" onClick={() => chat.stopAndSend(message.id)}>
                Stop and send
              </button>
            ) : null}
            {message.state === "failed" ? (
              <button type="button" onClick={() => chat.retry(message.id)}>
                Retry
              </button>
            ) : null}
            {message.state !== "sending" ? (
              <button type="button" class="quiet" onClick={() => chat.discard(message.id)}>
                Remove
              </button>
            ) : null}
          </span>
        </li>
      ))}
    </ol>
  );
}

function stateText(message: OutgoingMessage, turnRunning: boolean): string {
  switch (message.state) {
    case "queued":
      return turnRunning ? "Queued: sends when the turn ends" : "Queued";
    case "sending":
      return "Sending…";
    case "failed":
      return `Not sent: ${message.error ?? "refused"}`;
    case "started":
      return "";
  }
}
