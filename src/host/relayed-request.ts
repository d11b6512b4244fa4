import { RequestError } from "@agentclientprotocol/sdk";

export type RelayOutcome = { readonly result: unknown } | { readonly error: unknown };

/**
 * A request of the agent's that Berth does not answer itself (an extension method), put to every
 * client of the session at once: the first success is the answer, as for questions. It fails
 * only when every client that took it failed (the last failure, code and data intact), or with
 * -32601 when no client took it at all.
 */
export class RelayedRequest {
  readonly answer: Promise<unknown>;
  private resolve!: (result: unknown) => void;
  private reject!: (error: unknown) => void;
  private state: "open" | "sealed" | "settled" = "open";
  private readonly withdrawal = new AbortController();
  private outstanding = 0;
  private lastError: unknown;

  constructor(
    readonly method: string,
    readonly params: unknown,
    readonly signal: AbortSignal,
  ) {
    this.answer = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    signal.addEventListener("abort", () => this.settle({ error: signal.reason }), { once: true });
  }

  /** Aborted once the request is answered (or the agent gave up): every other client's copy is withdrawn. */
  get withdrawn(): AbortSignal {
    return this.withdrawal.signal;
  }

  /** A client takes the request; it reports its outcome, once, through the returned function. */
  claim(): (outcome: RelayOutcome) => void {
    this.outstanding++;
    let reported = false;
    return (outcome) => {
      if (reported) return;
      reported = true;
      this.outstanding--;
      if ("result" in outcome) return this.settle(outcome);
      this.lastError = outcome.error;
      if (this.state === "sealed" && this.outstanding === 0) this.settle(outcome);
    };
  }

  /** Every client present has had its chance to claim it. */
  seal(): void {
    if (this.state !== "open") return;
    this.state = "sealed";
    if (this.outstanding > 0) return;
    this.settle({ error: this.lastError ?? RequestError.methodNotFound(this.method) });
  }

  private settle(outcome: RelayOutcome): void {
    if (this.state === "settled") return;
    this.state = "settled";
    this.withdrawal.abort();
    if ("result" in outcome) this.resolve(outcome.result);
    else this.reject(outcome.error);
  }
}
