import type { IncomingMessage, ServerResponse } from "node:http";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json-nesting.js";

/** JSON request bodies larger than this are refused with 413. */
const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** An error a route answers with: `{ error: code, message }` and `status`. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** More fields of the answer beside `error` and `message`. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  // A refused body may still be arriving: do not keep reading it on this connection.
  const headers: Record<string, string> = error.status === 413 ? { Connection: "close" } : {};
  sendJson(res, error.status, { ...error.details, error: error.code, message: error.message }, headers);
}

/** A missing or wrong token: the status and nothing else, so a stranger learns nothing. */
export function sendUnauthorized(res: ServerResponse): void {
  sendJson(res, 401, { error: "unauthorized" });
}

/**
 * Reads a JSON body of at most {@link MAX_JSON_BODY_BYTES}; 415 unless it is declared
 * `Content-Type: application/json` (a page of another site can send `text/plain` without asking,
 * never JSON), 413 beyond the limit, 400 for anything but JSON or JSON nested deeper than {@link MAX_JSON_DEPTH}.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  if (!isJsonContentType(req.headers["content-type"])) {
    throw new HttpError(
      415,
      "unsupported_media_type",
      `the request body must be sent with Content-Type: application/json, got ${req.headers["content-type"] ?? "none"}`,
    );
  }
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_JSON_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") throw new HttpError(400, "invalid_body", "the request body is empty: expected a JSON object");
  if (nestedDeeperThan(text)) {
    throw new HttpError(400, "body_too_deep", `the request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the limit`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, "invalid_json", `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

function tooLarge(): HttpError {
  return new HttpError(413, "body_too_large", `the request body is larger than ${MAX_JSON_BODY_BYTES} bytes`);
}

/** `application/json`, with parameters (`; charset=utf-8`) or without. */
function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && header.split(";")[0]!.trim().toLowerCase() === "application/json";
}
