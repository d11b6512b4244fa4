import { describe, expect, it } from "vitest";
import { everySession } from "../../src/protocol/session-pages.js";

/** A list paged by keyset as the host pages it: newest activity first, `pageSize` a page, the cursor the last id read. */
class PagedList {
  private order: string[];
  constructor(
    ids: string[],
    private readonly pageSize: number,
  ) {
    this.order = [...ids];
  }

  /** The session became active: it moves to the front. */
  touch(id: string): void {
    this.order = [id, ...this.order.filter((other) => other !== id)];
  }

  page(path: string): { sessions: { id: string }[]; nextCursor?: string } {
    const cursor = new URL(path, "http://host").searchParams.get("cursor");
    const from = cursor === null ? 0 : this.order.indexOf(cursor) + 1;
    const ids = this.order.slice(from, from + this.pageSize);
    const more = from + this.pageSize < this.order.length;
    return { sessions: ids.map((id) => ({ id })), ...(more ? { nextCursor: ids.at(-1) } : {}) };
  }
}

describe("everySession", () => {
  it("reads every page once when nothing changes meanwhile", async () => {
    const list = new PagedList(["s3", "s2", "s1", "s0"], 2);
    const paths: string[] = [];
    const sessions = await everySession("/api/sessions", async (path) => {
      paths.push(path);
      return list.page(path);
    });
    expect(sessions.map((session) => session.id)).toEqual(["s3", "s2", "s1", "s0"]);
    // The walk, then the first page again, which brings nothing new.
    expect(paths).toEqual(["/api/sessions?limit=1000", "/api/sessions?limit=1000&cursor=s2", "/api/sessions?limit=1000"]);
  });

  it("keeps a session that became active during the walk and moved ahead of where it had come", async () => {
    const list = new PagedList(["s2", "s1", "s0"], 1);
    let reads = 0;
    const sessions = await everySession("/api/sessions", async (path) => {
      // After the first page, s0 (not read yet) becomes the newest: the keyset walk goes on past it.
      if (++reads === 2) list.touch("s0");
      return list.page(path);
    });
    expect(sessions.map((session) => session.id).sort()).toEqual(["s0", "s1", "s2"]);
  });

  it("stops with an error when the list gives a cursor twice, instead of reading forever", async () => {
    await expect(everySession("/api/sessions", async () => ({ sessions: [{ id: "s" }], nextCursor: "same" }))).rejects.toThrow(
      'the session list gave the cursor "same" twice',
    );
  });
});
