import { DEFAULT_MAX_MESSAGE_BYTES, RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { capturedLog, cleanUp, startFixture, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

async function view(fixture: BerthFixture, sessionId: string): Promise<SessionView> {
  const response = await fixture.api(`/api/sessions/${sessionId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as SessionView;
}

const cases = [
  {
    kind: "too-large",
    message: new RegExp(
      `^Internal error: the agent's answer is \\d+ bytes long, more than the limit of ${DEFAULT_MAX_MESSAGE_BYTES}; Berth refused it$`,
    ),
    data: { code: "agent_answer_too_large", size: expect.any(Number), limit: DEFAULT_MAX_MESSAGE_BYTES },
    logged: new RegExp(
      `^\\[berth\\] refused a message from the agent: the answer to request \\d+ is \\d+ bytes long, more than the limit of ${DEFAULT_MAX_MESSAGE_BYTES}: the request fails$`,
    ),
  },
  {
    kind: "not-json",
    message: /^Internal error: the agent's answer is not valid JSON; Berth refused it$/,
    data: { code: "agent_answer_not_json" },
    logged: /^\[berth\] refused a message from the agent: the answer to request \d+ is not valid JSON: the request fails$/,
  },
] as const;

describe("an agent's answer Berth refuses (too long, not JSON)", () => {
  it.each(cases)(
    "$kind: the prompt fails at once with an error naming what was wrong, the same agent completes the next prompt, and the refusal is logged",
    async ({ kind, message, data, logged }) => {
      const { log, lines } = capturedLog();
      const fixture = await startFixture({ log });
      const client = await fixture.connect();
      const sessionId = await client.newSession(fixture.workDir);
      const { pid } = await view(fixture, sessionId);

      const failure = await client.prompt(sessionId, `/bad-answer ${kind}`).then(
        () => expect.unreachable("the prompt succeeded"),
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(RequestError);
      expect(failure).toMatchObject({ code: -32603, data });
      expect((failure as RequestError).message).toMatch(message);
      if (kind === "too-large")
        expect((failure as RequestError).data).toMatchObject({ size: expect.toSatisfy((size: number) => size > DEFAULT_MAX_MESSAGE_BYTES) });

      // The turn ended with it: the session takes the next prompt, on the very same agent process.
      expect(await view(fixture, sessionId)).toMatchObject({ turnActive: false, pid });
      expect(await client.prompt(sessionId, "still here")).toMatchObject({ stopReason: "end_turn" });
      await client.waitForText(sessionId, "still here");
      expect(await view(fixture, sessionId)).toMatchObject({ pid });

      const refusals = lines.filter((line) => line.msg === "agent stderr" && String(line.stderr).startsWith("[berth] refused"));
      expect(refusals).toEqual([expect.objectContaining({ sessionId, stderr: expect.stringMatching(logged) })]);
    },
    60_000,
  );
});
