import { lookup } from "node:dns";
import { request } from "node:http";
import { isIP, type LookupFunction } from "node:net";
import { CodedError } from "../protocol/coded-error.js";

/** Why a pasted address is not delivered, or its delivery failed. */
export class LoginCallbackError extends CodedError<"callback_refused" | "callback_unreachable"> {
  override readonly name = "LoginCallbackError";
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** How long the agent's callback server has to answer. */
const CALLBACK_TIMEOUT_MS = 15_000;

/**
 * The address the person's browser ended on, checked against the login's captured address: only
 * `http` to a loopback host, at the port and path of the `redirect_uri` the agent put in it. Anything
 * else is refused: Berth makes requests from the host to nowhere but the agent's own callback.
 */
export function callbackTarget(captured: string, pasted: string): URL {
  const redirect = redirectOf(captured);
  let address: URL;
  try {
    address = new URL(pasted.trim());
  } catch {
    throw new LoginCallbackError("callback_refused", `not an address: ${JSON.stringify(pasted)} (paste the whole address your browser ended on)`);
  }
  if (address.protocol !== "http:" || !LOOPBACK_NAMES.has(address.hostname))
    throw new LoginCallbackError(
      "callback_refused",
      `the address must be on this host's loopback (http://localhost, 127.0.0.1 or [::1]) as the login's redirect_uri is; got ${address.origin}`,
    );
  if (portOf(address) !== portOf(redirect) || address.pathname !== redirect.pathname)
    throw new LoginCallbackError(
      "callback_refused",
      `the address does not match the login's redirect_uri ${redirect.origin}${redirect.pathname}: got port ${portOf(address)}, path ${address.pathname}`,
    );
  return address;
}

/** The agent's callback gets the address by a GET from this host; its answer's status is all that is read. */
export function deliverCallback(target: URL, signal?: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(target, { method: "GET", lookup: loopbackOnly, signal, timeout: CALLBACK_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", (error) => reject(unreachable(target, error)));
    });
    req.on("timeout", () => req.destroy(new Error(`no answer in ${CALLBACK_TIMEOUT_MS / 1000} s`)));
    req.on("error", (error) => reject(unreachable(target, error)));
    req.end();
  });
}

function redirectOf(captured: string): URL {
  let redirect: string | null = null;
  try {
    redirect = new URL(captured).searchParams.get("redirect_uri");
  } catch {
    // The agent opened no web address; said below.
  }
  if (redirect === null)
    throw new LoginCallbackError(
      "callback_refused",
      "the address the agent opened names no redirect_uri: Berth cannot tell where its callback listens",
    );
  let url: URL;
  try {
    url = new URL(redirect);
  } catch {
    throw new LoginCallbackError("callback_refused", `the agent's redirect_uri is not an address: ${JSON.stringify(redirect)}`);
  }
  if (url.protocol !== "http:" || !LOOPBACK_NAMES.has(url.hostname))
    throw new LoginCallbackError("callback_refused", `the agent's redirect_uri ${url.origin} is not on this host's loopback: nothing to deliver`);
  return url;
}

function portOf(url: URL): string {
  return url.port || "80";
}

/** `localhost` is resolved as usual, and only loopback answers are used. */
const loopbackOnly: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0);
    const loopback = addresses.filter(({ address }) => address === "::1" || (isIP(address) === 4 && address.startsWith("127.")));
    if (loopback.length === 0) return callback(new Error(`${hostname} does not resolve to a loopback address`), "", 0);
    if (options.all) return (callback as unknown as (e: null, a: typeof loopback) => void)(null, loopback);
    return callback(null, loopback[0]!.address, loopback[0]!.family);
  });
};

function unreachable(target: URL, error: Error): LoginCallbackError {
  return new LoginCallbackError(
    "callback_unreachable",
    `the agent's callback at ${target.origin}${target.pathname} did not answer: ${error.message}`,
  );
}
