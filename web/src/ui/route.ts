import { useEffect, useState } from "preact/hooks";

/** What the page shows, from the address's hash: `#/` the overview, `#/sessions/<id>` a chat, `#/agents/<id>/login/<method>` an agent's terminal login. */
export type Route =
  | { readonly name: "overview" }
  | { readonly name: "session"; readonly sessionId: string }
  | { readonly name: "login"; readonly agentId: string; readonly methodId: string };

const sessionPattern = /^#\/sessions\/([^/]+)$/;
const loginPattern = /^#\/agents\/([^/]+)\/login\/([^/]+)$/;

function parse(hash: string): Route {
  const session = sessionPattern.exec(hash);
  if (session) return { name: "session", sessionId: decodeURIComponent(session[1]!) };
  const login = loginPattern.exec(hash);
  if (login) return { name: "login", agentId: decodeURIComponent(login[1]!), methodId: decodeURIComponent(login[2]!) };
  return { name: "overview" };
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
