import type { IncomingMessage } from "node:http";
import { escapeHtml } from "./escape-html.js";

/**
 * Whether a refused request is a person's browser opening an address (a bookmark, a link with a
 * stale token): they get a page that says what to do, not `{"error":"unauthorized"}`.
 */
export function wantsPage(req: IncomingMessage): boolean {
  const mode = req.headers["sec-fetch-mode"];
  if (mode !== undefined) return mode === "navigate";
  const accept = req.headers.accept ?? "";
  return accept.includes("text/html");
}

/**
 * The page for an address opened without a valid token; it shows no token and needs nothing from outside.
 * `tokenLinkCommand` is how to print the link on the host, as Berth was started there (`berth token --link`).
 */
export const unauthorizedPage = (tokenLinkCommand: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Berth: open the link again</title>
<style>
  body { margin: 0; display: grid; min-height: 100vh; place-items: center; padding: 24px; box-sizing: border-box;
    font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f4f5f7; color: #1b1f24; }
  main { max-width: 34rem; padding: 28px; border: 1px solid #dde1e7; border-radius: 16px; background: #fff; }
  h1 { margin: 0 0 12px; font-size: 1.35rem; }
  code { padding: 1px 5px; border-radius: 5px; background: #eef0f3; font: 0.9em ui-monospace, monospace; }
  a { color: #2563d8; }
  @media (prefers-color-scheme: dark) {
    body { background: #0e1116; color: #e6e9ee; } main { background: #161b22; border-color: #2a313c; } code { background: #1c222b; } a { color: #5b93f5; }
  }
</style>
</head>
<body>
<main>
<h1>This link has no valid access token</h1>
<p>Berth did not recognise the token in this address, or this device's remembered login. The token may be mistyped or cut short, or it was replaced (the token command's <code>rotate</code>), which also forgets every remembered device.</p>
<p>On the machine that runs Berth, <code>${escapeHtml(tokenLinkCommand)}</code> prints a link that works; open it here. To use this device without the link next time, choose <em>Remember this device</em> in the dashboard's settings.</p>
<p><a href="/">Open the dashboard</a></p>
</main>
</body>
</html>
`;
