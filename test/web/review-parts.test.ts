// The Changes view's pure parts: status marks and totals, comments placed under their diff rows, a refused land read.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../web/src/api/api-error.js";
import type { ReviewComment } from "../../web/src/api/types.js";
import { lineDiff } from "../../web/src/content/line-diff.js";
import { anchorOf, placeComments } from "../../web/src/review/comment-anchors.js";
import { baseWords, countsText, statusLetter, statusWords, totalsText } from "../../web/src/review/change-words.js";
import { landRefusal, resolvePrompt } from "../../web/src/review/land-outcome.js";

function comment(line: number, side: ReviewComment["side"], createdAt: number, body = `on ${side} ${line}`): ReviewComment {
  return { id: `c${createdAt}`, sessionId: "s", path: "a.txt", line, side, body, createdAt, sentAt: null };
}

describe("the words of a change", () => {
  it("marks each status with git's letter and plain words, a rename with where it came from", () => {
    expect(["added", "modified", "deleted", "renamed"].map((status) => statusLetter(status as never))).toEqual(["A", "M", "D", "R"]);
    expect(statusWords({ status: "modified" })).toBe("modified");
    expect(statusWords({ status: "renamed", oldPath: "old/name.ts" })).toBe("renamed from old/name.ts");
  });

  it("counts lines with a real minus sign, and says when nothing changed", () => {
    expect(countsText({ added: 12, removed: 3 })).toBe("+12 −3");
    expect(totalsText({ files: 1, added: 2, removed: 0 })).toBe("1 file changed, +2 −0");
    expect(totalsText({ files: 3, added: 12, removed: 3 })).toBe("3 files changed, +12 −3");
    expect(totalsText({ files: 0, added: 0, removed: 0 })).toBe("No changes");
  });

  it("shows a base commit cut as git shows it, a branch as it is named", () => {
    expect(baseWords("26f4cb7406a3639d63bbc1ba636d42c3b7aa52c6")).toBe("26f4cb7406a3");
    expect(baseWords("main")).toBe("main");
  });
});

describe("comments under their rows", () => {
  const diff = lineDiff("one\ntwo\nthree\n", "one\n2\nthree\nfour\n");

  it("anchors an added or kept row to the new file's line, a removed row to the old file's, a hunk header to none", () => {
    const anchors = diff.lines.map((row) => [row.kind, row.text, anchorOf(row)]);
    expect(anchors).toEqual([
      ["hunk", "@@ -1,3 +1,4 @@", null],
      ["context", "one", { line: 1, side: "new" }],
      ["del", "two", { line: 2, side: "old" }],
      ["add", "2", { line: 2, side: "new" }],
      ["context", "three", { line: 3, side: "new" }],
      ["add", "four", { line: 4, side: "new" }],
    ]);
  });

  it("puts each comment under its row, oldest first, and keeps those on lines the diff no longer shows", () => {
    const later = comment(2, "new", 30);
    const earlier = comment(2, "new", 10);
    const removed = comment(2, "old", 20);
    const gone = comment(40, "new", 5);
    const placed = placeComments(diff.lines, [later, removed, gone, earlier]);
    expect(placed.byRow.get("new:2")).toEqual([earlier, later]);
    expect(placed.byRow.get("old:2")).toEqual([removed]);
    expect(placed.elsewhere).toEqual([gone]);
    expect([...placed.byRow.keys()].sort()).toEqual(["new:2", "old:2"]);
  });
});

describe("a refused land", () => {
  it("reads a failed check's output and a conflict's files from the refusal's body", () => {
    const check = new ApiError(409, "check_failed", "The check failed", { error: "check_failed", output: "1 test failed\n" });
    expect(landRefusal(check)).toEqual({ name: "check-failed", output: "1 test failed\n" });
    const conflict = new ApiError(409, "merge_conflict", "Conflicts", { error: "merge_conflict", files: ["a.txt", 3, "b/c.ts"] });
    expect(landRefusal(conflict)).toEqual({ name: "conflict", files: ["a.txt", "b/c.ts"] });
  });

  it("says anything else in a person's words", () => {
    expect(landRefusal(new ApiError(409, "not_active", "Internal error: the worktree was discarded"))).toEqual({
      name: "refused",
      message: "The worktree was discarded",
    });
    expect(landRefusal(new ApiError(409, "check_failed", "The check failed"))).toEqual({ name: "check-failed", output: "" });
  });

  it("asks the agent to resolve a conflict naming its base and files", () => {
    const prompt = resolvePrompt("main", ["a.txt", "b/c.ts"]);
    expect(prompt).toContain("into main");
    expect(prompt).toContain("These files conflict: a.txt, b/c.ts.");
  });
});
