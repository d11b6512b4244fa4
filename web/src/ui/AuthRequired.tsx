import { useEffect, useState } from "preact/hooks";
import { credential, forgetDevice, forgetTabToken, isRemembered } from "../auth/token.js";

const why = {
  token: "The token in the link this tab was opened with was not accepted: it is mistyped or cut short, or it was replaced (berth token rotate).",
  device:
    "This device was remembered, but its login no longer works: it was forgotten from another device, or the access token was replaced (berth token rotate), which forgets every device.",
  none: "This dashboard needs Berth's access token, and this tab has none.",
} as const;

/** What prints the link on the host, as Berth was started there (`npx berth-acp token --link`): Berth puts it in the page. */
function tokenLinkCommand(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="berth-token-link"]')?.content || "berth token --link";
}

/** Shown instead of the dashboard when the token or the remembered login is missing or refused. Never shows any token. */
export function AuthRequired() {
  // What the tab had when it was refused: forgetting the device below must not turn the reason into "none" on the next render.
  const [had] = useState(credential);
  // A tab's old token (the token rotated since it was opened) is refused, but the device is remembered: the page
  // loads again with the device's login (refused too, it is forgotten then: no loop).
  const [fallBack] = useState(() => had === "token" && isRemembered());
  const command = tokenLinkCommand();
  // A refused remembered login is no use any more: the next visit asks for the link at once.
  useEffect(() => {
    if (had === "device") forgetDevice();
    if (fallBack) {
      forgetTabToken();
      window.location.reload();
    }
  }, [had, fallBack]);
  if (fallBack) {
    return (
      <main class="auth">
        <p role="status">Opening the dashboard as this remembered device…</p>
      </main>
    );
  }
  return (
    <main class="auth">
      <div class="auth-card">
        <span class="mark large" aria-hidden="true" />
        <h1>Open the link Berth printed</h1>
        <p>{why[had]}</p>
        <p>
          On the machine that runs Berth, <code>{command}</code> prints a link that works (<code>{command} --qr</code> also draws it as a QR code to
          scan with a phone). Open the link ending in <code>?token=…</code> here.
        </p>
        <p class="muted">
          The token is kept in <code>token</code> in Berth's data directory. Once the link is open, this tab keeps the token for itself (never in a
          cookie, which every other site on this machine would receive) and removes it from the address bar. To come back without the link (in new
          tabs, bookmarks and links to a session), choose <em>Remember this device</em> when the dashboard offers it, or in its settings.
        </p>
      </div>
    </main>
  );
}
