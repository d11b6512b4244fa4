import { describe, expect, it } from "vitest";
import { errorWords, personWords } from "../../web/src/util/error-words.js";

describe("errors in a person's words", () => {
  it("drops the JSON-RPC label and keeps what names the fault", () => {
    expect(personWords("Invalid params: directory does not exist: /home/me/nowhere")).toBe("Directory does not exist: /home/me/nowhere");
    expect(personWords("Internal error: could not start the agent for session 1a2b: spawn opencode ENOENT")).toBe(
      "Could not start the agent for session 1a2b: spawn opencode ENOENT",
    );
    expect(personWords("Internal error: Invalid params: the title is too long")).toBe("The title is too long");
  });

  it("says something a person can read when the label is all there is", () => {
    expect(personWords("Internal error")).toBe("Something went wrong, and the agent or Berth said no more about it.");
    expect(personWords("Method not found:")).toBe("The agent does not support this.");
  });

  it("leaves a message without a label as it is", () => {
    expect(personWords("The session was deleted.")).toBe("The session was deleted.");
    // A label in the middle is part of what was said.
    expect(personWords("the agent said: Invalid params")).toBe("The agent said: Invalid params");
  });

  it("reads an ACP error's detail and anything else thrown", () => {
    const acp = Object.assign(new Error("Invalid params"), { code: -32602, data: { message: "directory does not exist: /x" } });
    expect(errorWords(acp)).toBe("Directory does not exist: /x");
    expect(errorWords(new Error("Internal error: no space left"))).toBe("No space left");
    expect(errorWords("refused")).toBe("Refused");
  });
});
