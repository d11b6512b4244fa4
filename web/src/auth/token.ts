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

/** A same-origin URL for EventSource or WebSocket, which cannot send headers: the token rides as `?token=`. */
export function authorizedUrl(path: string, protocol?: "ws"): string {
  const url = new URL(path, window.location.href);
  url.hash = "";
  if (protocol === "ws") url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const token = storedToken();
  if (token !== null) url.searchParams.set("token", token);
  return url.href;
}
