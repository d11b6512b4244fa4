import { useState } from "preact/hooks";

/** The message field: Enter sends, Shift+Enter starts a new line. */
export function PromptBox({ enabled, onSend }: { enabled: boolean; onSend: (text: string) => void }) {
  const [text, setText] = useState("");
  const send = (): void => {
    if (!enabled || text.trim() === "") return;
    onSend(text);
    setText("");
  };
  return (
    <form
      class="prompt"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label for="prompt-text" class="visually-hidden">
        Message to the agent
      </label>
      <textarea
        id="prompt-text"
        rows={2}
        placeholder="Message the agent…"
        aria-describedby="prompt-hint"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            send();
          }
        }}
      />
      <button type="submit" class="primary" disabled={!enabled || text.trim() === ""}>
        Send
      </button>
      <small id="prompt-hint" class="visually-hidden">
        Enter sends; Shift+Enter starts a new line.
      </small>
    </form>
  );
}
