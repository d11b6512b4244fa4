import { errorWords } from "../util/error-words.js";
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { ticketUrl } from "../auth/token.js";

/** Where a login terminal is: connecting, showing the login, ended with its status, or cut off before its end. */
export type LoginTerminalState =
  | { readonly name: "connecting" }
  | { readonly name: "running" }
  | { readonly name: "ended"; readonly exitCode: number | null; readonly signal: string | null }
  | { readonly name: "failed"; readonly reason: string };

/**
 * An agent's terminal login on the host, in `container`: xterm.js fitted to it, on the login's WebSocket (a ticket in
 * its URL, as the chat's). This module is a chunk of its own: xterm is loaded only when a login is opened.
 */
export function openLoginTerminal(
  container: HTMLElement,
  agentId: string,
  methodId: string,
  onState: (state: LoginTerminalState) => void,
): { dispose(): void } {
  const terminal = new Terminal({ convertEol: false, cursorBlink: true, fontSize: 14, scrollback: 2_000 });
  const fit = new FitAddon();
  terminal.loadAddon(fit);
  terminal.open(container);
  fit.fit();
  let socket: WebSocket | undefined;
  let disposed = false;
  let ended = false;
  const send = (message: string | Uint8Array<ArrayBuffer>): void => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(message);
  };
  const encoder = new TextEncoder();
  terminal.onData((data) => send(encoder.encode(data)));
  terminal.onResize(({ cols, rows }) => send(JSON.stringify({ type: "resize", cols, rows })));
  const resizes = new ResizeObserver(() => fit.fit());
  resizes.observe(container);

  const path = `api/agents/${encodeURIComponent(agentId)}/logins/${encodeURIComponent(methodId)}/terminal?cols=${terminal.cols}&rows=${terminal.rows}`;
  onState({ name: "connecting" });
  ticketUrl(path, "ws").then(
    (url) => {
      if (disposed) return;
      socket = new WebSocket(url);
      socket.binaryType = "arraybuffer";
      socket.onopen = () => {
        onState({ name: "running" });
        terminal.focus();
      };
      socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
        if (typeof event.data !== "string") return terminal.write(new Uint8Array(event.data));
        const message = JSON.parse(event.data) as { type: string; message?: string; exitCode?: number | null; signal?: string | null };
        if (message.type === "exit") {
          ended = true;
          onState({ name: "ended", exitCode: message.exitCode ?? null, signal: message.signal ?? null });
        } else if (message.type === "error") terminal.write(`\r\n[Berth: ${message.message ?? "a message was refused"}]\r\n`);
      };
      socket.onclose = (event) => {
        if (ended || disposed) return;
        // A refused upgrade reaches a page only as 1006: the likely reasons are named instead.
        const reason =
          event.code === 1006
            ? "the host refused or could not start this login (the agent offers no terminal login by this method, or another of its logins is running), or Berth is out of reach"
            : `the connection closed before the login ended (${event.code}${event.reason ? `: ${event.reason}` : ""})`;
        onState({ name: "failed", reason });
      };
    },
    (error: unknown) => onState({ name: "failed", reason: errorWords(error) }),
  );
  return {
    dispose() {
      disposed = true;
      resizes.disconnect();
      socket?.close(1000, "closed by the page");
      terminal.dispose();
    },
  };
}
