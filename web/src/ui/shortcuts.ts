/** What a key does on the dashboard. */
export type ShortcutAction = "help" | "search" | "next-session" | "previous-session" | "question" | "cancel-turn" | "new-session";

export interface Shortcut {
  readonly keys: readonly string[];
  readonly action: ShortcutAction;
  readonly description: string;
}

/** Every shortcut, as the help dialog lists them. */
export const shortcuts: readonly Shortcut[] = [
  { keys: ["?"], action: "help", description: "Show these shortcuts" },
  { keys: ["/"], action: "search", description: "Search sessions" },
  { keys: ["j"], action: "next-session", description: "Open the next session in the list" },
  { keys: ["k"], action: "previous-session", description: "Open the previous session in the list" },
  { keys: ["w"], action: "question", description: "Jump to the question that has waited longest" },
  { keys: ["Esc"], action: "cancel-turn", description: "Cancel the open chat's running turn, once confirmed (also while typing a message)" },
  { keys: ["n"], action: "new-session", description: "Start a new session" },
];

const byKey: ReadonlyMap<string, ShortcutAction> = new Map([
  ["?", "help"],
  ["/", "search"],
  ["j", "next-session"],
  ["k", "previous-session"],
  ["w", "question"],
  ["n", "new-session"],
  ["Escape", "cancel-turn"],
]);

/** Where a key was pressed: on the page, in the message box, in another field (a form's, a title's), or in a search field. */
export type KeyPlace = "page" | "prompt" | "field" | "search";

/**
 * The action of a key press, if any. While the person types a message only Escape acts (it offers to cancel the
 * turn: the message box is where one notices a turn going astray); in any other field none does (its Escape is its
 * own: a search clears, a form's field is left); keys with Ctrl, Alt or Meta are the browser's.
 */
export function shortcutOf(key: { key: string; ctrlKey: boolean; altKey: boolean; metaKey: boolean }, place: KeyPlace): ShortcutAction | undefined {
  if (key.ctrlKey || key.altKey || key.metaKey || place === "search" || place === "field") return undefined;
  if (place === "prompt" && key.key !== "Escape") return undefined;
  return byKey.get(key.key);
}

/** The session after (or before) the open one in the list; the first (or last) when none is open. */
export function neighbour(ids: readonly string[], openId: string | null, step: 1 | -1): string | undefined {
  if (ids.length === 0) return undefined;
  const at = openId === null ? -1 : ids.indexOf(openId);
  if (at === -1) return step === 1 ? ids[0] : ids[ids.length - 1];
  return ids[Math.min(ids.length - 1, Math.max(0, at + step))];
}
