import type { CreateElicitationResponse, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { answerFromElicitation, answerFromPermission } from "../../src/server/question-answers.js";

/** A reply as a client may send it: the SDK passes on whatever JSON came. */
const reply = <T>(value: unknown) => value as T;

describe("a client's reply to a question, as an answer", () => {
  it("takes a selected option, and no answer from a client's cancelled outcome", () => {
    expect(answerFromPermission({ outcome: { outcome: "selected", optionId: "allow" } })).toEqual({ optionId: "allow" });
    expect(answerFromPermission({ outcome: { outcome: "cancelled" } })).toBeUndefined();
  });

  it.each([
    [{ outcome: "yes" }, '{"outcome":"yes"}'],
    [{ outcome: { outcome: "selected" } }, '{"outcome":{"outcome":"selected"}}'],
    [{ outcome: { outcome: "selected", optionId: 7 } }, '{"outcome":{"outcome":"selected","optionId":7}}'],
    [{}, "{}"],
    [null, "null"],
  ])("refuses a permission reply that is no outcome, naming it: %j", (value, named) => {
    expect(() => answerFromPermission(reply<RequestPermissionResponse>(value))).toThrow(
      `the reply is no permission outcome ({ "outcome": "selected", "optionId": ... } or "cancelled"): ${named}`,
    );
  });

  it("takes a form's accepted fields, a decline and a cancel", () => {
    expect(answerFromElicitation({ action: "accept", content: { name: "Ada" } })).toEqual({ action: "accept", content: { name: "Ada" } });
    expect(answerFromElicitation({ action: "accept" })).toEqual({ action: "accept", content: {} });
    expect(answerFromElicitation({ action: "decline" })).toEqual({ action: "decline" });
    expect(answerFromElicitation({ action: "cancel" })).toEqual({ action: "cancel" });
  });

  it.each([{ action: "maybe" }, { action: "accept", content: "Ada" }, { action: "accept", content: ["Ada"] }, {}])(
    "refuses a form reply that is none of ACP's rather than reading it as a cancel, which would end the question for everyone: %j",
    (value) => {
      expect(() => answerFromElicitation(reply<CreateElicitationResponse>(value))).toThrow(
        `the reply is no form answer ("accept" with an object of fields, "decline" or "cancel"): ${JSON.stringify(value)}`,
      );
    },
  );

  it("shortens a long reply in its refusal", () => {
    const long = { outcome: "x".repeat(500) };
    expect(() => answerFromPermission(reply<RequestPermissionResponse>(long))).toThrow(`: ${JSON.stringify(long).slice(0, 200)}…`);
  });
});
