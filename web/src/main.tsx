import { render } from "preact";

render(<h1>Berth</h1>, document.getElementById("app")!);
