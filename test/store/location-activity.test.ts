import { describe, expect, it } from "vitest";
import { T0, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

describe("location activity", () => {
  it("keeps one record per (directory, workspace), with no workspace a key of its own", () => {
    const path = files.path();
    const store = files.open(path);
    store.locationActivity.upsert({ directory: "/repo", workspace: null, activeAt: T0, expiresAt: T0 + 60 });
    store.locationActivity.upsert({ directory: "/repo", workspace: "ws-1", activeAt: T0, expiresAt: T0 + 30 });
    store.locationActivity.upsert({ directory: "/repo", workspace: null, activeAt: T0 + 10, expiresAt: T0 + 70 });
    store.close();

    const reopened = files.open(path);
    expect(reopened.locationActivity.get("/repo", null)).toEqual({ directory: "/repo", workspace: null, activeAt: T0 + 10, expiresAt: T0 + 70 });
    expect(reopened.locationActivity.get("/repo", "ws-1")?.expiresAt).toBe(T0 + 30);
    expect(reopened.locationActivity.get("/repo", "ws-2")).toBeUndefined();
    expect(reopened.locationActivity.list().map((a) => [a.workspace, a.expiresAt])).toEqual([
      ["ws-1", T0 + 30],
      [null, T0 + 70],
    ]);
  });

  it("deletes one location without touching another workspace of the same directory", () => {
    const store = files.open(files.path());
    store.locationActivity.upsert({ directory: "/repo", workspace: null, activeAt: T0, expiresAt: T0 });
    store.locationActivity.upsert({ directory: "/repo", workspace: "ws", activeAt: T0, expiresAt: T0 });
    expect(store.locationActivity.delete("/repo", null)).toBe(true);
    expect(store.locationActivity.delete("/repo", null)).toBe(false);
    expect(store.locationActivity.list().map((a) => a.workspace)).toEqual(["ws"]);
  });

  it("refuses an empty-string workspace and a relative directory", () => {
    const store = files.open(files.path());
    expect(() => store.locationActivity.upsert({ directory: "/repo", workspace: "", activeAt: T0, expiresAt: T0 })).toThrow(
      "locationActivity.upsert: workspace must be a non-empty string",
    );
    expect(() => store.locationActivity.get("/repo", "")).toThrow("locationActivity.get: workspace must be a non-empty string");
    expect(() => store.locationActivity.upsert({ directory: "repo", workspace: null, activeAt: T0, expiresAt: T0 })).toThrow(
      "directory must be an absolute path",
    );
    expect(store.locationActivity.list()).toEqual([]);
  });
});
