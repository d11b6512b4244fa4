const STORAGE_KEY = "berth.token";

/**
 * Moves the access token from the address bar (`?token=`, the link `berth serve` prints) into
 * sessionStorage, once, and removes it from the address bar so it is never shown, bookmarked or
 * shared by accident.
 */
export function adoptTokenFromAddress(): void {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (token === null) return;
  if (token !== "") window.sessionStorage.setItem(STORAGE_KEY, token);
  url.searchParams.delete("token");
  window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
}

function storedToken(): string | null {
  return window.sessionStorage.getItem(STORAGE_KEY);
}

/**
 * Headers for `fetch`. The token lives in this tab's sessionStorage (scoped to this origin, port
 * included), never in a cookie: browsers send cookies to every port of a host.
 */
export function authHeaders(): Record<string, string> {
  const token = storedToken();
  return token === null ? {} : { Authorization: `Bearer ${token}` };
}

/**
 * A same-origin URL for EventSource or WebSocket, which cannot send headers: it carries a ticket
 * (`POST api/tickets`, with the token in a header) good for one connection within 30 s, never the
 * token itself, which proxies would log and the browser keep in its history. Rejects when no
 * ticket is given (the token refused, Berth unreachable); the caller finds out which.
 */
export async function ticketUrl(path: string, protocol?: "ws"): Promise<string> {
  const response = await fetch(new URL("api/tickets", window.location.href), { method: "POST", headers: authHeaders() });
  if (!response.ok) throw new Error(`Berth gave no ticket (HTTP ${response.status})`);
  const { ticket } = (await response.json()) as { ticket: string };
  const url = new URL(path, window.location.href);
  url.hash = "";
  if (protocol === "ws") url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("ticket", ticket);
  return url.href;
}
