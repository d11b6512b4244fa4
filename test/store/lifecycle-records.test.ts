import { describe, expect, it } from "vitest";
import { T0, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

describe("lifecycle records", () => {
  it("append with increasing ids; recent returns the newest, oldest first; after follows on", () => {
    const path = files.path();
    const store = files.open(path);
    const ids = ["child_acquired", "child_released", "location_evicted", "session_interrupted"].map((kind, i) =>
      store.lifecycleRecords.append(kind, { i }, T0 + i),
    );
    expect(ids).toEqual([1, 2, 3, 4]);
    store.close();

    const log = files.open(path).lifecycleRecords;
    expect(log.recent(2)).toEqual([
      { id: 3, at: T0 + 2, kind: "location_evicted", payload: { i: 2 } },
      { id: 4, at: T0 + 3, kind: "session_interrupted", payload: { i: 3 } },
    ]);
    expect(log.recent(100).map((r) => r.id)).toEqual([1, 2, 3, 4]);
    expect(log.after(2).map((r) => r.id)).toEqual([3, 4]);
    expect(log.after(0, 1).map((r) => r.id)).toEqual([1]);
    expect(log.after(4)).toEqual([]);
    expect(log.append("child_acquired", {}, T0 + 9)).toBe(5);
  });

  it("prunes records older than a cutoff, keeping ids increasing", () => {
    const log = files.open(files.path()).lifecycleRecords;
    for (let i = 0; i < 5; i++) log.append("turn_started", { i }, T0 + i * 1000);
    expect(log.pruneBefore(T0 + 3000)).toBe(3);
    expect(log.recent(10).map((r) => r.at)).toEqual([T0 + 3000, T0 + 4000]);
    expect(log.pruneBefore(T0)).toBe(0);
    expect(log.append("turn_ended", {}, T0 + 5000)).toBe(6);
  });

  it("rejects a malformed record", () => {
    const log = files.open(files.path()).lifecycleRecords;
    expect(() => log.append("", {}, T0)).toThrow("lifecycleRecords.append: kind must be a non-empty string");
    expect(() => log.append("x", {}, -5)).toThrow("lifecycleRecords.append: at must be a non-negative integer of milliseconds");
    expect(() => log.recent(-1)).toThrow("lifecycleRecords.recent: limit must be a non-negative integer");
    expect(log.recent(10)).toEqual([]);
  });
});
