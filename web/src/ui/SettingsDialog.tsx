import type { DesktopNotifications, NotificationsState } from "../notify/desktop-notifications.js";
import { useObservable } from "../live/observable.js";
import { DeviceSettings } from "./DeviceSettings.js";
import { Modal } from "./Modal.js";

const notificationsText: Record<NotificationsState, string> = {
  unsupported:
    "This browser cannot show notifications for this page: browsers allow them only on https or on this machine (localhost). The tab's title and icon still count what waits.",
  ask: "Get a notification when an agent asks a question or a turn ends while this tab is in the background.",
  on: "On: a question or a finished turn raises a notification while this tab is in the background.",
  muted: "Off for this page (the browser allows them).",
  blocked: "Blocked in the browser's site settings; allow them there to turn them on.",
};

/** What this browser does for the person: notifications, and whether it is remembered. */
export function SettingsDialog({ notifications, onClose }: { notifications: DesktopNotifications; onClose: () => void }) {
  const state = useObservable(notifications.state);
  return (
    <Modal labelledBy="settings-title" onClose={onClose}>
      <h2 id="settings-title">Settings</h2>
      <section class="setting" aria-labelledby="notifications-heading">
        <h3 id="notifications-heading">Notifications</h3>
        <p class="muted" id="notifications-state">
          {notificationsText[state]}
        </p>
        {state === "ask" || state === "muted" ? (
          <button type="button" class="primary" aria-describedby="notifications-state" onClick={() => void notifications.enable()}>
            Turn on notifications
          </button>
        ) : null}
        {state === "on" ? (
          <button type="button" aria-describedby="notifications-state" onClick={() => notifications.mute()}>
            Turn off notifications
          </button>
        ) : null}
      </section>
      <DeviceSettings />
      <div class="dialog-actions">
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </Modal>
  );
}
