/** A JSON-RPC request id, as it came on the wire (null only in an error response to a request whose id was unreadable). */
export type RequestId = string | number | null;

/**
 * Which of an agent's prompts each of its requests belongs to, by the order of the messages on the wire: a request
 * belongs to the oldest prompt the agent had not answered when it sent it (an agent works on its prompts one at a
 * time, in the order they came: it queues a prompt sent during a turn, or answers the running one cancelled first).
 *
 * Why the wire and not the answers' promises: the SDK hands Berth a request the agent sent right after answering a
 * prompt before that answer's promise reactions ran, so the request would look as if it came during that prompt.
 * `sent`, `answered` and `asked` are called as the messages cross the wire; `ownerOf` when the request is handled.
 */
export class PromptsInFlight<Owner> {
  /** The prompts sent and not answered yet, oldest first. */
  private readonly inFlight: Array<{ readonly id: RequestId; readonly owner: Owner | undefined }> = [];
  /** By the id of a request the agent sent, the owner of the prompt it belongs to (none: no prompt was in flight). */
  private readonly asks = new Map<RequestId, Owner | undefined>();

  /** A prompt went to the agent under `id`; `owner` is who sent it (undefined: no one to hand its requests to). */
  sent(id: RequestId, owner: Owner | undefined): void {
    this.inFlight.push({ id, owner });
  }

  /** The agent answered `id` (a result or an error); not a prompt's: nothing changes. */
  answered(id: RequestId): void {
    const at = this.inFlight.findIndex((prompt) => prompt.id === id);
    if (at >= 0) this.inFlight.splice(at, 1);
  }

  /**
   * Berth's request for prompt `id` settled. Its answer crossed the wire first (then nothing changes; a refused answer
   * whose id was readable counts as answered too), or never will: its line was refused with no readable id, or the
   * connection ended. The prompt leaves then, so the agent's later requests belong to the prompts after it.
   */
  settled(id: RequestId): void {
    this.answered(id);
  }

  /** The agent sent request `id`: it belongs to the oldest prompt in flight. */
  asked(id: RequestId): void {
    this.asks.set(id, this.inFlight[0]?.owner);
  }

  /** The owner of the prompt request `id` belongs to (once: the request is being handled); undefined if none. */
  ownerOf(id: RequestId): Owner | undefined {
    const owner = this.asks.get(id);
    this.asks.delete(id);
    return owner;
  }

  /** Berth answered the agent's request `id`: nothing is kept for it (one refused before it was handled, too). */
  replied(id: RequestId): void {
    this.asks.delete(id);
  }
}
