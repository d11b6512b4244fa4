import { render } from "preact";
import { adoptTokenFromAddress } from "./auth/token.js";
import { LiveOverview } from "./live/overview.js";
import { DesktopNotifications } from "./notify/desktop-notifications.js";
import { App } from "./ui/App.js";

adoptTokenFromAddress();
render(<App overview={new LiveOverview()} notifications={new DesktopNotifications()} />, document.getElementById("app")!);
