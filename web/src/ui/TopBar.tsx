import type { LinkState } from "../live/overview.js";

const linkText: Record<LinkState["name"], string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
  unauthorized: "Not authorized",
};

export function TopBar({ link, onNewSession }: { link: LinkState; onNewSession: () => void }) {
  return (
    <header class="topbar">
      <a class="brand" href="#/">
        <span class="mark" aria-hidden="true" />
        Berth
      </a>
      <p class={`link link-${link.name}`} role="status">
        <span class="dot" aria-hidden="true" />
        {linkText[link.name]}
      </p>
      <button type="button" class="primary" onClick={onNewSession}>
        New session
      </button>
    </header>
  );
}
