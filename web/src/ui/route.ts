import { useEffect, useState } from "preact/hooks";

/** What the page shows, from the address's hash: `#/` the overview, `#/sessions/<id>` a chat, `#/agents` the agents. */
export type Route = { readonly name: "overview" } | { readonly name: "session"; readonly sessionId: string } | { readonly name: "agents" };

const sessionPattern = /^#\/sessions\/([^/]+)$/;

export const AGENTS_HREF = "#/agents";

function parse(hash: string): Route {
  if (hash === AGENTS_HREF) return { name: "agents" };
  const match = sessionPattern.exec(hash);
  return match ? { name: "session", sessionId: decodeURIComponent(match[1]!) } : { name: "overview" };
}

/** Where an agent's login with one of its auth methods is shown. */
export function agentLoginHref(agentId: string, methodId: string): string {
  return `#/agents/${encodeURIComponent(agentId)}/login/${encodeURIComponent(methodId)}`;
}

export function sessionHref(sessionId: string): string {
  return `#/sessions/${encodeURIComponent(sessionId)}`;
}

export function navigate(href: string): void {
  window.location.hash = href;
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
