import { render } from "preact";
import { adoptTokenFromAddress, isRemembered } from "./auth/token.js";
import { LiveOverview } from "./live/overview.js";
import { DesktopNotifications } from "./notify/desktop-notifications.js";
import { App } from "./ui/App.js";
import { loadChat } from "./ui/chat-loader.js";
import { currentRoute } from "./ui/route.js";

// Let in by the printed link, on a device not yet remembered: the page offers to remember it.
const offerRemember = adoptTokenFromAddress() && !isRemembered();
// Opened on a session's address: the chat is in the first render, never the overview first in its place.
// A chat that is slow to come (a stalled request) is not waited for past 2 s: the page shows, and the chat follows it.
if (currentRoute().name === "session") await Promise.race([loadChat().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000))]);
render(
  <App offerRemember={offerRemember} overview={new LiveOverview()} notifications={new DesktopNotifications()} />,
  document.getElementById("app")!,
);
