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
export function withText(outbox: Outbox, id: number, text: string): Outbox {
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
