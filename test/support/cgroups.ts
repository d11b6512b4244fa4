import { expect } from "vitest";

/**
 * Whether a test may use cgroups: the probe's answer (`usable`). Where the run requires them
 * (`BERTH_TEST_CGROUPS=required`, which `npm run mutate:processes` sets) a no fails the test instead: a mutant that
 * breaks the probe would otherwise only skip the tests that could kill it.
 */
export function cgroupsAvailable(usable: boolean): boolean {
  if (process.env.BERTH_TEST_CGROUPS === "required") expect(usable, "this run requires cgroups (BERTH_TEST_CGROUPS=required)").toBe(true);
  return usable;
}

export const NO_CGROUPS = "the host may not create cgroups here";
