/** The `changes` events of a Server-Sent Events response, read as they arrive. */
export class ChangeEventReader {
  readonly events: { event: string; data: Record<string, unknown> }[] = [];
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private text = "";

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  /** Reads until `enough` holds of the events so far; fails, showing them, if it does not within 10 s. */
  async until(enough: (events: ChangeEventReader["events"]) => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!enough(this.events)) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`not within 10 s; events so far: ${JSON.stringify(this.events)}`)),
          Math.max(0, deadline - Date.now()),
        );
      });
      try {
        const { value, done } = await Promise.race([this.reader.read(), timedOut]);
        if (done) throw new Error("the event stream ended");
        this.text += this.decoder.decode(value, { stream: true });
      } finally {
        clearTimeout(timer);
      }
      const frames = this.text.split("\n\n");
      this.text = frames.pop()!;
      for (const frame of frames) {
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event && data) this.events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
      }
    }
  }

  close(): Promise<void> {
    return this.reader.cancel();
  }
}

export const changedPaths = (event: { data: Record<string, unknown> }) => (event.data.files as { path: string }[]).map((file) => file.path);
