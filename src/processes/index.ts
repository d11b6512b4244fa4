export type { ProcessGroupLedger } from "./ledger.js";
export { reapLeftoverGroups } from "./reap.js";
export { describeExit, spawnGroup } from "./spawn-group.js";
export type { ExitStatus, SpawnedGroup } from "./spawn-group.js";
export { attachScope, ProcessScope, scopeOf } from "./scope.js";
export type { ProcessTracking } from "./scope.js";
