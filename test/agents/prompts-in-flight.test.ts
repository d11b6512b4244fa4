import { describe, expect, it } from "vitest";
import { PromptsInFlight } from "../../src/agents/prompts-in-flight.js";

describe("PromptsInFlight: an agent's request belongs to the oldest prompt not answered before it on the wire", () => {
  it("a request after the first prompt's answer belongs to the queued one, one before it to the first", () => {
    const prompts = new PromptsInFlight<string>();
    prompts.sent(1, "a");
    prompts.asked("r1");
    prompts.sent(2, "b");
    prompts.asked("r2");
    prompts.answered(1);
    prompts.asked("r3");
    // Handled later, in any order: each keeps the prompt it came under.
    expect([prompts.ownerOf("r3"), prompts.ownerOf("r1"), prompts.ownerOf("r2")]).toEqual(["b", "a", "a"]);
  });

  it("a later prompt answered first (refused) leaves the requests to the first", () => {
    const prompts = new PromptsInFlight<string>();
    prompts.sent(1, "a");
    prompts.sent(2, "b");
    prompts.answered(2);
    prompts.asked(7);
    expect(prompts.ownerOf(7)).toBe("a");
  });

  it("no prompt in flight, or a prompt sent without an owner: no owner; an answer to another request changes nothing", () => {
    const prompts = new PromptsInFlight<string>();
    prompts.asked(1);
    prompts.sent(5, undefined);
    prompts.sent(6, "b");
    prompts.answered(99);
    prompts.asked(2);
    expect([prompts.ownerOf(1), prompts.ownerOf(2)]).toEqual([undefined, undefined]);
  });

  it("tells a request's owner once, and forgets it once the request was answered", () => {
    const prompts = new PromptsInFlight<string>();
    prompts.sent(1, "a");
    prompts.asked(3);
    expect(prompts.ownerOf(3)).toBe("a");
    expect(prompts.ownerOf(3)).toBeUndefined();
    prompts.asked(4);
    prompts.replied(4);
    expect(prompts.ownerOf(4)).toBeUndefined();
  });

  it("a prompt whose answer never crossed the wire (refused, the connection gone) leaves once its request settled; settling an answered one changes nothing", () => {
    const prompts = new PromptsInFlight<string>();
    prompts.sent(1, "a");
    prompts.sent(2, "b");
    // The agent's answer to 1 was refused before the SDK: the wire never said it was answered.
    prompts.asked("r1");
    prompts.settled(1);
    prompts.asked("r2");
    expect([prompts.ownerOf("r1"), prompts.ownerOf("r2")]).toEqual(["a", "b"]);
    // Answered on the wire first, settled after its promise's reactions ran: the queued prompt stays in flight.
    prompts.sent(3, "c");
    prompts.answered(2);
    prompts.settled(2);
    prompts.asked("r3");
    expect(prompts.ownerOf("r3")).toBe("c");
    prompts.settled(3);
    prompts.asked("r4");
    expect(prompts.ownerOf("r4")).toBeUndefined();
  });
});
