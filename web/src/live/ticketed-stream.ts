import { ticketUrl } from "../auth/token.js";

/** Hands each event of `type` to `handle`, its data parsed from JSON. */
type On = <T>(type: string, handle: (data: T) => void) => void;

interface TicketedStreamHandlers {
  /** Adds the stream's own event listeners. */
  readonly listen: (on: On) => void;
  /** Connected. */
  readonly opened?: () => void;
  /** Lost, refused (e.g. 401) or never opened: the caller finds out why and opens a new one. */
  readonly closed: () => void;
}

/** Server-Sent Events at `path`, opened with a one-use ticket (an EventSource sends no header); returns what stops it. */
export function openTicketedStream(path: string, handlers: TicketedStreamHandlers): () => void {
  let source: EventSource | undefined;
  let stopped = false;
  ticketUrl(path).then(
    (url) => {
      if (stopped) return;
      const opened = new EventSource(url);
      source = opened;
      if (handlers.opened) opened.addEventListener("open", handlers.opened);
      handlers.listen((type, handle) => opened.addEventListener(type, (event) => handle(JSON.parse((event as MessageEvent<string>).data))));
      // The ticket opened one connection: the browser's own retry would present it again and be refused.
      opened.addEventListener("error", () => {
        opened.close();
        handlers.closed();
      });
    },
    () => {
      if (!stopped) handlers.closed();
    },
  );
  return () => {
    stopped = true;
    source?.close();
  };
}
