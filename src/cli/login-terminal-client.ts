import { constants } from "node:os";
import type { RawData, WebSocket } from "ws";
import { openAcpSocket } from "./acp-socket.js";
import { HostClientError } from "./host-client.js";

export interface LoginTerminalClientOptions {
  /** The host's base URL, `http://127.0.0.1:7420`. */
  readonly url: string;
  readonly token: string;
  readonly agentId: string;
  readonly methodId: string;
  readonly input: NodeJS.ReadStream;
  readonly output: NodeJS.WriteStream;
}

/** The login's end as the host reported it. */
interface LoginExit {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * `berth login`: this terminal attached to an agent's terminal login on the host. Keys go there as they are typed (raw
 * mode: Ctrl-C reaches the login, not this command), the screen comes back, and a resize of this terminal resizes
 * the login's. Resolves with the login's exit status as a process's (128 + the signal's number for a signal).
 */
export async function attachLoginTerminal(options: LoginTerminalClientOptions): Promise<number> {
  const { input, output } = options;
  const url = new URL(
    `${options.url.replace(/^http/, "ws")}/api/agents/${encodeURIComponent(options.agentId)}/logins/${encodeURIComponent(options.methodId)}/terminal`,
  );
  if (output.isTTY) {
    url.searchParams.set("cols", String(output.columns));
    url.searchParams.set("rows", String(output.rows));
  }
  const ws = await openAcpSocket(url.href, options.token);
  const sendKeys = (keys: Buffer): void => ws.send(keys, { binary: true });
  const sendSize = (): void => ws.send(JSON.stringify({ type: "resize", cols: output.columns, rows: output.rows }));
  if (input.isTTY) input.setRawMode(true);
  input.on("data", sendKeys);
  output.on("resize", sendSize);
  try {
    const exit = await screenUntilExit(ws, output);
    return exit.signal ? 128 + (constants.signals[exit.signal] ?? 0) : (exit.exitCode ?? 1);
  } finally {
    output.off("resize", sendSize);
    input.off("data", sendKeys);
    if (input.isTTY) input.setRawMode(false);
    input.pause();
  }
}

/** Writes the login's screen out until its exit frame; a connection that closes before it is a failure. */
function screenUntilExit(ws: WebSocket, output: NodeJS.WriteStream): Promise<LoginExit> {
  return new Promise((resolve, reject) => {
    let exit: LoginExit | undefined;
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (isBinary) return void output.write(data as Buffer);
      const message = JSON.parse(String(data)) as { type?: string; message?: string } & LoginExit;
      if (message.type === "exit") exit = { exitCode: message.exitCode, signal: message.signal };
      else if (message.type === "error") output.write(`\r\nberth login: ${message.message ?? "the host refused a message"}\r\n`);
    });
    ws.once("close", (code: number, reason: Buffer) => {
      if (exit) return resolve(exit);
      const why = reason.length > 0 ? `: ${reason.toString("utf8")}` : "";
      reject(new HostClientError(`the host closed the login's connection before the login ended (${code}${why})`));
    });
  });
}
