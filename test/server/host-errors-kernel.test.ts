import { describe, expect, it } from "vitest";
import { LocationServicesClosedError } from "../../src/lifecycle/location-services-cache.js";
import { locationKey } from "../../src/lifecycle/location-key.js";
import { StaleHoldError } from "../../src/lifecycle/session-holds.js";
import { classifyError } from "../../src/host/host-errors.js";

describe("kernel errors reach clients as clear errors (issue 13)", () => {
  it("StaleHoldError is a conflict that names the hold, not an internal error", () => {
    const error = new StaleHoldError("s1", "conn-1");
    expect(classifyError(error)).toEqual({
      class: "conflict",
      code: "hold_ended",
      message: "hold of conn-1 on session s1 ended before its agent was ready",
    });
  });

  it("a closed services cache says the host is shutting down", () => {
    const error = new LocationServicesClosedError(locationKey("/w/app"));
    expect(classifyError(error)).toMatchObject({ class: "unavailable", code: "shutting_down" });
  });
});
