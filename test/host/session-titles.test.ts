import { describe, expect, it } from "vitest";
import { plainText } from "../../src/store/plain-text.js";
import { agentTitled, generatedTitle, normalTitle, personTitled } from "../../src/host/session-titles.js";

describe("plainText", () => {
  it("leaves out Markdown's marks and keeps the words, line by line", () => {
    const markdown = [
      "# Refactor plan for `cart.ts`",
      "",
      "Here is **what** I _found_ in *three* ~~two~~ [files](https://example.com/x) ![a chart](c.png).",
      "> quoted <b>bold</b>",
      "- [ ] open task",
      "- [x] done task",
      "1. first",
      "```ts",
      "const snake_case = 1;",
      "```",
      "---",
      "| a | b |",
      "|---|:-:|",
      "| 1 | 2 |",
    ].join("\n");
    expect(plainText(markdown).split("\n")).toEqual([
      "Refactor plan for cart.ts",
      "",
      "Here is what I found in three two files a chart.",
      "quoted bold",
      "open task",
      "done task",
      "first",
      "const snake_case = 1;",
      "a  b",
      "1  2",
    ]);
  });

  it("leaves words with marks inside them as they are", () => {
    expect(plainText("snake_case_name and 2*3*4 and a_b")).toBe("snake_case_name and 2*3*4 and a_b");
  });
});

describe("generatedTitle", () => {
  it("is the first line's first sentence, without Markdown", () => {
    expect(generatedTitle("# Refactor plan for `cart.ts`\n\nHere is what I found. More later.")).toBe("Refactor plan for cart.ts");
    expect(generatedTitle("Fix the login bug. It fails on Safari.")).toBe("Fix the login bug.");
    expect(generatedTitle("Why does v1.2 of cart.ts crash? I think it is the cache")).toBe("Why does v1.2 of cart.ts crash?");
    expect(generatedTitle("\n\n  **Hello**   there  ")).toBe("Hello there");
  });

  it("is at most 60 characters, cut at a word with an ellipsis", () => {
    const title = generatedTitle("Please look through the whole checkout flow and tell me where the rounding errors come from")!;
    expect(title).toBe("Please look through the whole checkout flow and tell me…");
    expect([...title].length).toBeLessThanOrEqual(60);
    // One word longer than the limit is cut inside it.
    expect(generatedTitle("x".repeat(100))).toBe(`${"x".repeat(59)}…`);
    expect(generatedTitle("e".repeat(60))).toBe("e".repeat(60));
  });

  it("is null for a prompt with no words", () => {
    expect(generatedTitle("")).toBeNull();
    expect(generatedTitle("```\n```\n---")).toBeNull();
  });
});

describe("what a title can hold", () => {
  it("one line without control characters (a NUL cannot be stored in PostgreSQL), a lone surrogate half as U+FFFD, whoever gives it", () => {
    expect(normalTitle(" Fix\u0000 the\n\tlogin\u0007 bug ")).toBe("Fix the login bug");
    expect(normalTitle("half \ud800 of a pair, and a whole one 😀")).toBe("half \ufffd of a pair, and a whole one 😀");
    expect(() => normalTitle("\u0000\u0001")).toThrow("a title must not be empty");
    expect(generatedTitle("Deploy\u0000 it. Then more")).toBe("Deploy it.");
    expect(agentTitled({}, { sessionUpdate: "session_info_update", title: "Agent\u0000's \udc00title" })?.retitle).toBe("Agent's \ufffdtitle");
  });
});

describe("who names a session", () => {
  const agentSays = (title: string | null) => ({ sessionUpdate: "session_info_update" as const, title });

  it("the agent's title replaces Berth's, and a later one its earlier", () => {
    const first = agentTitled({}, agentSays("Cart refactor"))!;
    expect(first).toEqual({ retitle: "Cart refactor", agentState: { title: "Cart refactor", titledBy: "agent" } });
    expect(agentTitled(first.agentState, agentSays("  Cart\nrefactor, part 2 "))!.retitle).toBe("Cart refactor, part 2");
  });

  it("a person's name stands over the agent's, which is kept and shows again once the person clears theirs", () => {
    const named = personTitled({ title: "Cart refactor", titledBy: "agent" }, "My name");
    expect(named).toEqual({ title: "My name", agentState: { title: "Cart refactor", titledBy: "person" } });
    const later = agentTitled(named.agentState, agentSays("Agent's second"))!;
    expect(later).toEqual({ retitle: null, agentState: { title: "Agent's second", titledBy: "person" } });
    expect(personTitled(later.agentState, null)).toEqual({ title: "Agent's second", agentState: { title: "Agent's second", titledBy: "agent" } });
    // Never titled by the agent: cleared is cleared.
    expect(personTitled({ titledBy: "person" }, null)).toEqual({ title: null, agentState: {} });
  });

  it("an update that names nothing changes nothing", () => {
    expect(agentTitled({}, agentSays(null))).toBeNull();
    expect(agentTitled({}, agentSays("  \n "))).toBeNull();
    expect(agentTitled({}, { sessionUpdate: "session_info_update", updatedAt: "2026-01-01T00:00:00Z" })).toBeNull();
  });

  it("clips an agent's title longer than a person may give", () => {
    expect([...agentTitled({}, agentSays("word ".repeat(100)))!.retitle!].length).toBeLessThanOrEqual(200);
  });
});
