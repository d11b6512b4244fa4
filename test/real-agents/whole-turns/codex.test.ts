import { codex } from "./agents/codex.js";
import { describeWholeTurns } from "./scenarios.js";

describeWholeTurns(codex);
