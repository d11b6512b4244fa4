import { render } from "preact";
import { adoptTokenFromAddress } from "./auth/token.js";
import { LiveOverview } from "./live/overview.js";
import { App } from "./ui/App.js";

adoptTokenFromAddress();
render(<App overview={new LiveOverview()} />, document.getElementById("app")!);
