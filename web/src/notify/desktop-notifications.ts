import { Observable } from "../live/observable.js";

/**
 * Whether the page may raise browser notifications: `unsupported` (no Notification API, or not a
 * secure context: a LAN address over plain http), `ask` (the person has not decided), `on`,
 * `muted` (allowed by the browser, turned off here), `blocked` (refused in the browser).
 */
export type NotificationsState = "unsupported" | "ask" | "on" | "muted" | "blocked";

const MUTED_KEY = "berth.notifications.muted";

/** Browser notifications for what needs the person, asked for only from their own click. */
export class DesktopNotifications {
  readonly state = new Observable<NotificationsState>(currentState());

  /** From a click (browsers ignore a permission request without a user gesture). */
  async enable(): Promise<void> {
    if (this.state.value === "unsupported") return;
    window.localStorage.removeItem(MUTED_KEY);
    // Asked even if the page saw it granted: the browser answers at once then, and this click is the gesture it needs otherwise.
    if (Notification.permission !== "denied") await Notification.requestPermission();
    this.state.set(currentState());
  }

  mute(): void {
    window.localStorage.setItem(MUTED_KEY, "1");
    this.state.set(currentState());
  }

  /** One notification; a later one with the same `tag` replaces it. Clicking it shows the page at `href`. */
  show(title: string, body: string, tag: string, href: string): void {
    this.state.set(currentState());
    if (this.state.value !== "on") return;
    const notification = new Notification(title, { body, tag, icon: "icon-192.png" });
    notification.onclick = () => {
      window.focus();
      window.location.hash = href;
      notification.close();
    };
  }
}

function currentState(): NotificationsState {
  if (typeof Notification === "undefined" || !window.isSecureContext) return "unsupported";
  if (Notification.permission === "denied") return "blocked";
  if (Notification.permission === "default") return "ask";
  return window.localStorage.getItem(MUTED_KEY) === "1" ? "muted" : "on";
}
