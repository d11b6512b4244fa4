import { errorWords } from "../util/error-words.js";
import { useEffect, useRef, useState } from "preact/hooks";

type Editing =
  | { readonly name: "showing" }
  | { readonly name: "editing"; readonly draft: string }
  | { readonly name: "saving"; readonly draft: string }
  | { readonly name: "failed"; readonly draft: string; readonly message: string };

/**
 * A session's title with a *Rename* button: Enter saves (an empty title clears it, and the next
 * prompt names the session again), Escape gives up. `children` is the title as shown.
 */
export function EditableTitle({
  title,
  shown,
  level,
  headingId,
  onRename,
  children,
}: {
  /** The stored title, null for none. */
  title: string | null;
  /** What the title reads as, for labels ("Untitled session 1a2b3c4d"). */
  shown: string;
  level: 2 | 3;
  headingId: string;
  onRename: (title: string | null) => Promise<void>;
  children: preact.ComponentChildren;
}) {
  const [editing, setEditing] = useState<Editing>({ name: "showing" });
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);
  useEffect(() => {
    if (editing.name === "editing" && !wasEditing.current) input.current?.select();
    // Back to the Rename button, unless the person went on elsewhere while it saved (the keys would then be shortcuts).
    const focusLost = document.activeElement === null || document.activeElement === document.body;
    if (editing.name === "showing" && wasEditing.current && focusLost) renameButton.current?.focus();
    wasEditing.current = editing.name !== "showing";
  }, [editing.name]);
  const Heading = level === 2 ? "h2" : "h3";

  if (editing.name === "showing") {
    return (
      <div class="title-line">
        <Heading id={headingId}>{children}</Heading>
        <button
          ref={renameButton}
          type="button"
          class="icon-button rename"
          aria-label={`Rename ${shown}`}
          title="Rename"
          onClick={() => setEditing({ name: "editing", draft: title ?? "" })}
        >
          <svg viewBox="0 0 24 24" width="15" height="15" aria-hidden="true">
            <path
              fill="currentColor"
              d="M3 17.25V21h3.75L17.81 9.94l-3.75-3.75L3 17.25ZM20.71 7.04a1 1 0 0 0 0-1.41l-2.34-2.34a1 1 0 0 0-1.41 0l-1.83 1.83 3.75 3.75 1.83-1.83Z"
            />
          </svg>
        </button>
      </div>
    );
  }

  const save = (event: Event): void => {
    event.preventDefault();
    const draft = editing.draft.trim();
    setEditing({ name: "saving", draft: editing.draft });
    onRename(draft === "" ? null : draft).then(
      () => setEditing({ name: "showing" }),
      (error: unknown) => setEditing({ name: "failed", draft: editing.draft, message: errorWords(error) }),
    );
  };
  return (
    <form class="title-edit" onSubmit={save}>
      <Heading id={headingId} class="visually-hidden">
        {children}
      </Heading>
      <input
        ref={input}
        value={editing.draft}
        maxLength={200}
        aria-label="Session title"
        placeholder="Untitled (the next prompt names it)"
        disabled={editing.name === "saving"}
        onInput={(event) => setEditing({ name: "editing", draft: event.currentTarget.value })}
        onKeyDown={(event) => {
          // Escape gives up the edit; it must not also reach the page's shortcut (cancel the turn).
          if (event.key !== "Escape") return;
          event.stopPropagation();
          setEditing({ name: "showing" });
        }}
      />
      <button type="submit" class="primary" disabled={editing.name === "saving"}>
        {editing.name === "saving" ? "Saving…" : "Save"}
      </button>
      {/* A save under way is not taken back: its end would close a later edit. */}
      <button type="button" disabled={editing.name === "saving"} onClick={() => setEditing({ name: "showing" })}>
        Cancel
      </button>
      {editing.name === "failed" ? (
        <p class="error" role="alert">
          {editing.message}
        </p>
      ) : null}
    </form>
  );
}
