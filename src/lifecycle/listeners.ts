/**
 * A set of callbacks for one kind of event; `add` returns the function that removes it.
 * One failing listener never keeps the others from hearing the event: they all run, then
 * the failure goes to `onError` (by default it is rethrown to whoever emitted).
 */
export class Listeners<T> {
  private readonly set = new Set<(value: T) => void>();

  constructor(private readonly onError?: (error: unknown) => void) {}

  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  emit(value: T): void {
    let failure: { error: unknown } | undefined;
    for (const listener of this.set) {
      try {
        listener(value);
      } catch (error) {
        if (this.onError) this.onError(error);
        else failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
