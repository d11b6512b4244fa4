import { opencode } from "./agents/opencode.js";
import { describeWholeTurns } from "./scenarios.js";

describeWholeTurns(opencode);
