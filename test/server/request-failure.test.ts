import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/host/store-health.js";
import { HttpError } from "../../src/server/http-io.js";
import { requestFailureLine } from "../../src/server/request-failure.js";

const unavailable = (message: string) => new HttpError(503, "store_unavailable", message);

describe("how a request that threw is logged", () => {
  it("a write the store did not take in time is a warning: the outage itself is logged once", () => {
    const error = new StoreUnavailableError("the answer could not be stored within 10s: …; it stays queued");
    expect(requestFailureLine(error, unavailable(error.message))).toEqual({ level: "warn", msg: "request refused: the store cannot write" });
  });

  it("a store_unavailable wrapping a cause of its own (an adoption the database refused) failed", () => {
    const error = new StoreUnavailableError('session "s" was not adopted: copying it: duplicate key', { cause: new Error("duplicate key") });
    expect(requestFailureLine(error, unavailable(error.message))).toEqual({ level: "error", msg: "request failed" });
  });

  it("a bug failed; a refusal while the host stops and a client's mistake are not logged here", () => {
    const bug = new TypeError("x is undefined");
    expect(requestFailureLine(bug, new HttpError(500, "internal_error", bug.message))).toEqual({ level: "error", msg: "request failed" });
    const stopping = new HttpError(503, "shutting_down", "the host is stopping");
    expect(requestFailureLine(stopping, stopping)).toBeUndefined();
    const missing = new HttpError(404, "not_found", "no route GET /api/nope");
    expect(requestFailureLine(missing, missing)).toBeUndefined();
  });
});
