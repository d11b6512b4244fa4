export type { Json } from "./input.js";
