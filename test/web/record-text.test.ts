// How the Host page's record feed words the records that carry a session: the file requests an editor or the disk answered.
import { describe, expect, it } from "vitest";
import type { HostRecord } from "../../web/src/api/types.js";
import { recordDetails, recordTone } from "../../web/src/ui/record-text.js";

const base = { at: "2026-12-02T12:00:00.000Z", message: "agent's file request put to the prompting client" };
const titled = (id: string) => (id === "s-1" ? "Fix the build" : "");

describe("a file_request record in the Host page's feed", () => {
  it("says the editor answered, with the session's title, the method and the path", () => {
    const record = { ...base, kind: "file_request", sessionId: "s-1", method: "fs/write_text_file", path: "/w/a.ts", by: "client" } as HostRecord;
    expect(recordDetails(record, titled)).toBe("Fix the build · fs/write_text_file /w/a.ts · the editor answered");
    expect(recordTone(record)).toBe("muted");
  });

  it("says why the disk answered instead", () => {
    const record = {
      ...base,
      kind: "file_request",
      sessionId: "s-1",
      method: "fs/read_text_file",
      path: "/w/b.ts",
      by: "disk",
      why: "client_gone",
    } as HostRecord;
    expect(recordDetails(record, titled)).toBe("Fix the build · fs/read_text_file /w/b.ts · the disk answered (client gone)");
  });

  it("says a write the editor left unanswered was not made", () => {
    const record = {
      ...base,
      kind: "file_request",
      sessionId: "s-1",
      method: "fs/write_text_file",
      path: "/w/c.ts",
      by: "none",
      why: "timeout",
    } as HostRecord;
    expect(recordDetails(record, titled)).toBe("Fix the build · fs/write_text_file /w/c.ts · not written, the agent was told (timeout)");
  });
});
