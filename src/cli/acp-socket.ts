import type { IncomingMessage } from "node:http";
import { WebSocket } from "ws";
import { berthCommand } from "../config/invocation.js";
import { HostClientError } from "./host-client.js";

/** More of a refusal's body than a one-line error needs is not read. */
const MAX_REFUSAL_BYTES = 8 * 1024;

/**
 * Opens the WebSocket of Berth's `/acp`; an absent host or a refused upgrade becomes a
 * {@link HostClientError} saying why in one line, where `ws` would only say
 * "Unexpected server response: 401".
 */
export function openAcpSocket(url: string, token: string): Promise<WebSocket> {
  const where = url.replace(/\?.*$/, "");
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    ws.once("open", () => {
      ws.off("error", failed);
      resolve(ws);
    });
    const failed = (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED") reject(new HostClientError(`no Berth host answers at ${where} (start one with "${berthCommand()} serve")`));
      else reject(new HostClientError(`cannot reach the Berth host at ${where}: ${error.message}`));
    };
    ws.once("error", failed);
    ws.once("unexpected-response", (request, response) => {
      void refusalOf(response).then((message) => {
        // Listening for this event takes ws's own error away: the request is ours to end.
        request.destroy();
        reject(new HostClientError(message));
      });
    });
  });
}

async function refusalOf(response: IncomingMessage): Promise<string> {
  const status = response.statusCode ?? 0;
  if (status === 401) return `the host refused the token (401); check --token or the data directory`;
  let body = "";
  for await (const chunk of response as AsyncIterable<Buffer>) {
    body += chunk.toString("utf8");
    if (body.length > MAX_REFUSAL_BYTES) break;
  }
  const message = messageOf(body);
  // An unknown agent's message names the configured ones; it says all there is to say.
  return status === 400 && message ? message : `the host refused the connection (${status})${message ? `: ${message}` : ""}`;
}

function messageOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    return typeof parsed.message === "string" ? parsed.message : undefined;
  } catch {
    return undefined;
  }
}
