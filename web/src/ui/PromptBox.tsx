import { useEffect, useRef, useState } from "preact/hooks";
import { draftOf, keepDraft } from "../chat/drafts.js";
import { commandQuery, matchingCommands, type SlashCommand, withCommand } from "../chat/slash-commands.js";

/**
 * The `/` menu: `following` the command name being typed, with the `active` entry; `dismissed` by
 * Escape for this very text (typing on shows it again).
 */
type CommandMenu = { readonly name: "following"; readonly active: number } | { readonly name: "dismissed"; readonly text: string };

const MENU_ID = "prompt-commands";

/**
 * The message field: Enter sends, Shift+Enter starts a new line. Typing `/` offers the agent's
 * commands (Up/Down choose, Enter or Tab insert `/command `, Escape closes the menu; Enter sends a
 * command already typed in full). It takes the
 * focus when it appears, unless `focusOnOpen` is off (the person is stepping through sessions). What is typed and not
 * sent is the session's draft (`drafts.ts`): it is there again when the conversation is.
 */
export function PromptBox({
  sessionId,
  enabled,
  commands,
  focusOnOpen,
  onSend,
}: {
  /** The session whose draft the box holds; null for a session not created yet. */
  sessionId: string | null;
  enabled: boolean;
  commands: readonly SlashCommand[];
  focusOnOpen: boolean;
  onSend: (text: string) => void;
}) {
  const [text, setShownText] = useState(() => (sessionId === null ? "" : draftOf(sessionId)));
  // Kept as it changes, not in an effect: a page left (or reloaded) right after a keystroke keeps it too.
  const setText = (next: string): void => {
    setShownText(next);
    if (sessionId !== null) keepDraft(sessionId, next);
  };
  const [menu, setMenu] = useState<CommandMenu>({ name: "following", active: 0 });
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    // Behind an open dialog (New session, about to close) the page is inert: the app focuses the box once it closed.
    if (focusOnOpen) field.current!.focus();
  }, []);

  const query = commandQuery(text);
  const offered = query === null ? [] : matchingCommands(commands, query);
  const open = offered.length > 0 && !(menu.name === "dismissed" && menu.text === text);
  const active = open && menu.name === "following" ? Math.min(menu.active, offered.length - 1) : -1;

  const edit = (next: string): void => {
    setText(next);
    if (menu.name === "dismissed" ? menu.text !== next : menu.active !== 0) setMenu({ name: "following", active: 0 });
  };
  const insert = (command: SlashCommand): void => {
    setText(withCommand(command));
    setMenu({ name: "following", active: 0 });
    field.current?.focus();
  };
  const send = (): void => {
    if (!enabled || text.trim() === "") return;
    onSend(text);
    setText("");
  };
  const onMenuKey = (event: KeyboardEvent): boolean => {
    switch (event.key) {
      case "ArrowDown":
        setMenu({ name: "following", active: (active + 1) % offered.length });
        return true;
      case "ArrowUp":
        setMenu({ name: "following", active: (active - 1 + offered.length) % offered.length });
        return true;
      case "Enter":
      case "Tab": {
        const chosen = offered[active]!;
        // A command typed in full (`/mode`) is sent by Enter: inserting it would only add a space.
        if (event.shiftKey || (event.key === "Enter" && isTypedInFull(text, chosen))) return false;
        insert(chosen);
        return true;
      }
      case "Escape":
        // Closes the menu only: not the page's Escape (which offers to cancel the turn).
        setMenu({ name: "dismissed", text });
        return true;
      default:
        return false;
    }
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
      {open ? (
        <div id={MENU_ID} class="command-menu" role="listbox" aria-label="The agent's commands">
          {offered.map((command, index) => (
            <div
              key={command.name}
              id={`${MENU_ID}-${index}`}
              role="option"
              // Chosen from the field (aria-activedescendant), which keeps the focus.
              tabIndex={-1}
              aria-selected={index === active}
              class={index === active ? "active" : undefined}
              // Before the field loses the focus: a click inserts and typing goes on.
              onMouseDown={(event) => {
                event.preventDefault();
                insert(command);
              }}
            >
              <span class="command-name">/{command.name}</span>
              {command.hint ? <span class="command-hint">{command.hint}</span> : null}
              {command.description ? <span class="command-description">{command.description}</span> : null}
            </div>
          ))}
        </div>
      ) : null}
      <textarea
        id="prompt-text"
        ref={field}
        rows={2}
        placeholder="Message the agent… (/ for commands)"
        aria-describedby="prompt-hint"
        aria-autocomplete="list"
        aria-controls={open ? MENU_ID : undefined}
        aria-activedescendant={active >= 0 ? `${MENU_ID}-${active}` : undefined}
        value={text}
        onInput={(e) => edit(e.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.isComposing) return;
          if (open && onMenuKey(event)) {
            event.preventDefault();
            return;
          }
          if (event.key === "Enter" && !event.shiftKey) {
            event.preventDefault();
            send();
          }
        }}
      />
      <button type="submit" class="primary" disabled={!enabled || text.trim() === ""}>
        Send
      </button>
      <small id="prompt-hint" class="visually-hidden">
        Enter sends; Shift+Enter starts a new line; / offers the agent's commands.
      </small>
    </form>
  );
}

function isTypedInFull(text: string, command: SlashCommand): boolean {
  return text.slice(1).toLowerCase() === command.name.toLowerCase();
}
