import type { ComponentChildren } from "preact";
import type { LinkState } from "../live/overview.js";
import { AGENTS_HREF, HOST_HREF } from "./route.js";

const linkText: Record<LinkState["name"], string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
  unauthorized: "Not authorized",
};

export function TopBar({
  link,
  onNewSession,
  onSettings,
  onHelp,
  children,
}: {
  link: LinkState;
  onNewSession: () => void;
  onSettings: () => void;
  onHelp: () => void;
  /** Shown under the bar, sticky with it (what waits for the person). */
  children?: ComponentChildren;
}) {
  return (
    <header class="topbar">
      <div class="topbar-row">
        {/* The page's one top-level heading: panels and the chat are its h2s. */}
        <h1 class="brand-heading">
          <a class="brand" href="#/" aria-label="Berth">
            <span class="mark" aria-hidden="true" />
            <span class="brand-name">Berth</span>
          </a>
        </h1>
        <p class={`link link-${link.name}`} role="status">
          <span class="dot" aria-hidden="true" />
          {linkText[link.name]}
        </p>
        <a class="button host-button" href={HOST_HREF} title="This host: agent processes, locations, lifecycle records">
          Host
        </a>
        <a class="button" href={AGENTS_HREF}>
          Agents
        </a>
        <button type="button" class="icon-button" onClick={onSettings} aria-label="Settings" title="Settings: notifications, this device">
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
            <path
              fill="currentColor"
              d="M19.14 12.94c.04-.3.06-.61.06-.94 0-.32-.02-.64-.07-.94l2.03-1.58a.49.49 0 0 0 .12-.61l-1.92-3.32a.49.49 0 0 0-.59-.22l-2.39.96a7 7 0 0 0-1.62-.94l-.36-2.54a.48.48 0 0 0-.48-.41h-3.84a.47.47 0 0 0-.47.41l-.36 2.54a7.4 7.4 0 0 0-1.62.94l-2.39-.96a.48.48 0 0 0-.59.22L2.74 8.87a.47.47 0 0 0 .12.61l2.03 1.58a7 7 0 0 0 0 1.88l-2.03 1.58a.49.49 0 0 0-.12.61l1.92 3.32c.12.22.37.29.59.22l2.39-.96c.5.38 1.03.7 1.62.94l.36 2.54c.05.24.24.41.48.41h3.84c.24 0 .44-.17.47-.41l.36-2.54a7 7 0 0 0 1.62-.94l2.39.96c.22.08.47 0 .59-.22l1.92-3.32a.48.48 0 0 0-.12-.61l-2.01-1.58ZM12 15.6a3.6 3.6 0 1 1 0-7.2 3.6 3.6 0 0 1 0 7.2Z"
            />
          </svg>
        </button>
        <button type="button" class="icon-button" onClick={onHelp} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">
          <span aria-hidden="true" class="help-mark">
            ?
          </span>
        </button>
        <button type="button" class="primary" onClick={onNewSession}>
          New session
        </button>
      </div>
      {children}
    </header>
  );
}
