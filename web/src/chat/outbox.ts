/** A message the person sent, from the moment it is typed until the journal has its turn. */
export interface OutgoingMessage {
  readonly id: number;
  readonly text: string;
  /**
   * `queued`: waits for the running turn to end (or for the connection); `editing`: queued, held
   * back (and the messages after it) while the person edits it;
   * `sending`: prompted, its turn not in the journal yet; `started`: its turn is in the journal
   * (the transcript shows it); `failed`: refused before any turn started, with why.
   */
  readonly state: "queued" | "editing" | "sending" | "started" | "failed";
  readonly error: string | null;
  /** The journal's last seq when it was sent: its turn comes after. */
  readonly afterSeq: number;
  /** It was sent at least once (so its turn may be in the journal). */
  readonly tried: boolean;
}

/** The messages not yet in the transcript, in the order they go out. */
export type Outbox = readonly OutgoingMessage[];

export function withState(outbox: Outbox, id: number, change: Partial<Omit<OutgoingMessage, "id" | "text">>): Outbox {
  return outbox.map((message) => (message.id === id ? { ...message, ...change } : message));
}

/** A message's new text, queued again; empty text removes it. */
function withText(outbox: Outbox, id: number, text: string): Outbox {
  if (text.trim() === "") return without(outbox, id);
  return outbox.map((message) => (message.id === id ? { ...message, text, state: "queued", error: null } : message));
}

/** Moves a message to the front of the queue (it goes out next). */
export function toFront(outbox: Outbox, id: number): Outbox {
  const message = outbox.find((m) => m.id === id);
  return message ? [{ ...message, state: "queued", error: null }, ...outbox.filter((m) => m.id !== id)] : outbox;
}

export function without(outbox: Outbox, id: number): Outbox {
  return outbox.filter((message) => message.id !== id);
}

/** The outbox with a message just typed, queued after the others (its turn comes after `afterSeq`). */
export function withQueued(outbox: Outbox, id: number, text: string, afterSeq: number): Outbox {
  return [...outbox, { id, text, state: "queued", error: null, afterSeq, tried: false }];
}

/**
 * The message that goes out next, or null: messages go out in the order they were typed, so one
 * being edited holds back the queue behind it.
 */
export function nextToSend(outbox: Outbox): OutgoingMessage | null {
  const next = outbox.find((message) => message.state === "queued" || message.state === "editing");
  return next?.state === "queued" ? next : null;
}

/** A queued message held back while the person edits it (it keeps its place); anything else stays as it is. */
export function withEditing(outbox: Outbox, id: number): Outbox {
  return outbox.some((message) => message.id === id && message.state === "queued") ? withState(outbox, id, { state: "editing" }) : outbox;
}

/** The edit is done: `text` goes out in the message's turn (empty removes it), null keeps it as it was. */
export function withEdited(outbox: Outbox, id: number, text: string | null): Outbox {
  if (!outbox.some((message) => message.id === id && message.state === "editing")) return outbox;
  return text === null ? withState(outbox, id, { state: "queued" }) : withText(outbox, id, text);
}

/**
 * How a message's prompt ended, once the journal was read after it:
 * - `turn-started`: its turn is in the journal (the transcript shows it);
 * - `cut-off`: another client's turn came first, or the connection went: it goes out again after;
 * - `refused`: no turn started, for `reason`.
 */
export type SendEnding = { readonly name: "turn-started" } | { readonly name: "cut-off" } | { readonly name: "refused"; readonly reason: string };

export function withSendEnded(outbox: Outbox, id: number, ending: SendEnding): Outbox {
  switch (ending.name) {
    case "turn-started":
      return without(outbox, id);
    case "cut-off":
      return withState(outbox, id, { state: "queued" });
    case "refused":
      return withState(outbox, id, { state: "failed", error: ending.reason });
  }
}

/**
 * Messages whose turn is in the journal (`hasTurn`) are shown by the transcript, not the outbox;
 * one whose send was cut off by a lost connection but reached Berth is not sent twice.
 */
export function reconciled(outbox: Outbox, hasTurn: (message: OutgoingMessage) => boolean): Outbox {
  let result = outbox;
  for (const message of outbox) {
    if (!message.tried || message.state === "started" || !hasTurn(message)) continue;
    result = message.state === "sending" ? withState(result, message.id, { state: "started" }) : without(result, message.id);
  }
  return result;
}
