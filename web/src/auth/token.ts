const STORAGE_KEY = "berth.token";
/** The page's half of a remembered login (the other half is Berth's HttpOnly cookie). */
const LOGIN_KEY = "berth.login";

/**
 * Moves the access token from the address bar (`?token=`, the link `berth serve` prints) into
 * sessionStorage, once, and removes it from the address bar so it is never shown, bookmarked or
 * shared by accident. Returns whether the address carried one.
 */
export function adoptTokenFromAddress(): boolean {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (token === null) return false;
  if (token !== "") window.sessionStorage.setItem(STORAGE_KEY, token);
  url.searchParams.delete("token");
  window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
  return token !== "";
}

function storedToken(): string | null {
  return window.sessionStorage.getItem(STORAGE_KEY);
}

function storedLogin(): string | null {
  return window.localStorage.getItem(LOGIN_KEY);
}

/** How this page is let in: the link's token (this tab), a remembered device, or nothing. */
export function credential(): "token" | "device" | "none" {
  if (storedToken() !== null) return "token";
  return storedLogin() !== null ? "device" : "none";
}

/** The tab's token was refused: it is dropped, so the tab falls back on the remembered device, if any. */
export function forgetTabToken(): void {
  window.sessionStorage.removeItem(STORAGE_KEY);
}

export function rememberDevice(pageSecret: string): void {
  window.localStorage.setItem(LOGIN_KEY, pageSecret);
}

/** This device is not remembered any more (forgotten here, revoked elsewhere, or the token rotated). */
export function forgetDevice(): void {
  window.localStorage.removeItem(LOGIN_KEY);
}

export function isRemembered(): boolean {
  return storedLogin() !== null;
}

/**
 * Headers for `fetch`. The token lives in this tab's sessionStorage (scoped to this origin, port
 * included), never in a cookie: browsers send cookies to every port of a host. A remembered
 * device sends its page's half instead (`X-Berth-Login`), which Berth checks with its cookie.
 */
export function authHeaders(): Record<string, string> {
  const token = storedToken();
  if (token !== null) return { Authorization: `Bearer ${token}` };
  const login = storedLogin();
  return login === null ? {} : { "X-Berth-Login": login };
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
