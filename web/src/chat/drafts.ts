/**
 * What the person typed in a session's message box and has not sent, kept for this tab (sessionStorage) by session:
 * leaving a conversation (another session, its Changes, the list) or reloading the page finds it again.
 */
const PREFIX = "berth.draft:";

/** The tab's `sessionStorage`, as much of it as this uses. */
interface TabStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

const storage = (): TabStorage => (globalThis as unknown as { sessionStorage: TabStorage }).sessionStorage;

export function draftOf(sessionId: string): string {
  try {
    return storage().getItem(PREFIX + sessionId) ?? "";
  } catch {
    // Storage refused (a private window's quota, a policy): the draft lives only as long as the box.
    return "";
  }
}

/** Keeps the box's text for the session; empty text forgets it. */
export function keepDraft(sessionId: string, text: string): void {
  try {
    if (text === "") storage().removeItem(PREFIX + sessionId);
    else storage().setItem(PREFIX + sessionId, text);
  } catch {
    // As above: nothing more can be done for it.
  }
}

/** Messages a closed chat could not send go back to the session's draft, before what it already held, so none is lost. */
export function keepUnsent(sessionId: string, texts: readonly string[]): void {
  if (texts.length === 0) return;
  const draft = draftOf(sessionId);
  keepDraft(sessionId, [...texts, ...(draft === "" ? [] : [draft])].join("\n\n"));
}
