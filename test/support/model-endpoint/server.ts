import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { format as anthropicMessages } from "./anthropic-messages.js";
import { format as geminiGenerateContent } from "./gemini-generate-content.js";
import { format as openAiChat } from "./openai-chat.js";
import { format as openAiResponses } from "./openai-responses.js";
import type { ModelRequest, ModelScript, WireFormat } from "./script.js";
import { sendJson } from "./sse.js";

/**
 * A scripted model endpoint on 127.0.0.1: real agents pointed here (test/real-agents/whole-turns)
 * get the replies a test scripts, in the wire format of the path they call. Every request is
 * recorded, normalized (`requests`); a path no format serves answers 404 and is recorded too
 * (`unrouted`), so a test sees what an agent tried.
 */

/** Path (without the query) → wire format. */
const routes: ReadonlyMap<string, WireFormat> = new Map([
  ["/v1/chat/completions", openAiChat],
  ["/v1/messages", anthropicMessages],
  ["/v1/responses", openAiResponses],
]);

/** The Gemini API names the model in the path: `/v1beta/models/MODEL:generateContent` or `:streamGenerateContent`. */
const geminiPath = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/;

function formatFor(pathname: string): WireFormat | undefined {
  return routes.get(pathname) ?? (geminiPath.test(pathname) ? geminiGenerateContent : undefined);
}

export interface ModelEndpoint {
  /** `http://127.0.0.1:PORT` (agents add their own `/v1`). */
  readonly url: string;
  /** Every routed request, normalized, in order of arrival. */
  readonly requests: ModelRequest[];
  /** Requests to paths no format serves: `METHOD path`. */
  readonly unrouted: string[];
  /** What went wrong answering (unparsable body, a script that threw), as messages. */
  readonly errors: string[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startModelEndpoint(script: ModelScript): Promise<ModelEndpoint> {
  const requests: ModelRequest[] = [];
  const unrouted: string[] = [];
  const errors: string[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = req.url ?? "/";
    const pathname = path.split("?")[0]!;
    if (pathname === "/" && (req.method === "HEAD" || req.method === "GET")) {
      req.resume();
      res.writeHead(200, { "content-type": "text/plain" }).end(req.method === "GET" ? "scripted model endpoint\n" : undefined);
      return;
    }
    const wire = req.method === "POST" ? formatFor(pathname) : undefined;
    const text = await readBody(req);
    if (!wire) {
      unrouted.push(`${req.method} ${path}`);
      sendJson(res, 404, { error: { type: "not_found", message: `scripted model endpoint: no format serves ${req.method} ${pathname}` } });
      return;
    }
    let request: ModelRequest;
    let turn: ReturnType<ModelScript>;
    try {
      request = wire.parse(JSON.parse(text), path);
      requests.push(request);
      turn = script(request, requests.length - 1);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      errors.push(`${req.method} ${path}: ${message}`);
      // A 400 is not retried by the agents: the turn ends with this error at once.
      sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: `scripted model endpoint: ${message}` } });
      return;
    }
    await wire.respond(turn, request, res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      errors.push(`${req.method} ${req.url}: ${message}`);
      // A turn the format cannot write (refused before its first byte) is answered like a script error.
      if (res.headersSent) res.destroy();
      else sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: `scripted model endpoint: ${message}` } });
    });
  });
  await new Promise<void>((ok, fail) => server.once("error", fail).listen(0, "127.0.0.1", ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unrouted,
    errors,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
