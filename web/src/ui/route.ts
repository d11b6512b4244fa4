import { useEffect, useState } from "preact/hooks";

/**
 * What the page shows, from the address's hash: `#/` (or none) opens the last conversation (`root`), `#/sessions` the
 * list with no conversation open, `#/sessions/<id>` a chat, `#/host` the host's processes and records, `#/agents` the agents,
 * `#/agents/<id>/login/<methodId>` a login, `#/agents/<id>/login/<methodId>/terminal` a terminal login's screen,
 * `#/sessions/<id>/changes` a session's changes, `#/sessions/<id>/changes/<path>` one changed file.
 */
export type Route =
  | { readonly name: "root" }
  | { readonly name: "sessions" }
  | { readonly name: "host" }
  | { readonly name: "agents" }
  | { readonly name: "session"; readonly sessionId: string }
  | { readonly name: "changes"; readonly sessionId: string; readonly path: string | null }
  | { readonly name: "agent-login"; readonly agentId: string; readonly methodId: string }
  | { readonly name: "terminal-login"; readonly agentId: string; readonly methodId: string };

const sessionPattern = /^#\/sessions\/([^/]+)$/;
const changesPattern = /^#\/sessions\/([^/]+)\/changes(?:\/([^/]+))?$/;
const agentLoginPattern = /^#\/agents\/([^/]+)\/login\/([^/]+)(\/terminal)?$/;

export const AGENTS_HREF = "#/agents";
export const SESSIONS_HREF = "#/sessions";
export const HOST_HREF = "#/host";

function parse(hash: string): Route {
  if (hash === AGENTS_HREF) return { name: "agents" };
  if (hash === SESSIONS_HREF) return { name: "sessions" };
  if (hash === HOST_HREF) return { name: "host" };
  const session = sessionPattern.exec(hash);
  if (session) return { name: "session", sessionId: decodeURIComponent(session[1]!) };
  const changes = changesPattern.exec(hash);
  if (changes)
    return { name: "changes", sessionId: decodeURIComponent(changes[1]!), path: changes[2] === undefined ? null : decodeURIComponent(changes[2]) };
  const login = agentLoginPattern.exec(hash);
  if (login)
    return { name: login[3] ? "terminal-login" : "agent-login", agentId: decodeURIComponent(login[1]!), methodId: decodeURIComponent(login[2]!) };
  return { name: "root" };
}

export function agentLoginHref(agentId: string, methodId: string): string {
  return `#/agents/${encodeURIComponent(agentId)}/login/${encodeURIComponent(methodId)}`;
}

export function terminalLoginHref(agentId: string, methodId: string): string {
  return `${agentLoginHref(agentId, methodId)}/terminal`;
}

export function sessionHref(sessionId: string): string {
  return `#/sessions/${encodeURIComponent(sessionId)}`;
}

/** A session's changes, or one changed file (its path as one segment: slashes encoded). */
export function changesHref(sessionId: string, path: string | null = null): string {
  const changes = `${sessionHref(sessionId)}/changes`;
  return path === null ? changes : `${changes}/${encodeURIComponent(path)}`;
}

export function navigate(href: string): void {
  window.location.hash = href;
}

/** Goes to `href` in place of the address: Back does not return to an address that only led there. */
export function redirect(href: string): void {
  window.location.replace(href);
}

/** The route the address names now (a render may not have caught up with it yet). */
export function currentRoute(): Route {
  return parse(window.location.hash);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = (): void => setRoute(currentRoute());
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}
