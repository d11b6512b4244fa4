import { claude } from "./agents/claude.js";
import { describeWholeTurns } from "./scenarios.js";

describeWholeTurns(claude);
