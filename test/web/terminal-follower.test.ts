import { describe, expect, it } from "vitest";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { ApiError } from "../../web/src/api/api-error.js";
import type { TerminalOutputResult } from "../../web/src/api/types.js";
import { TerminalFollower } from "../../web/src/chat/terminal-follower.js";
import { Transcript } from "../../web/src/chat/transcript.js";

let seq = 0;
function toolCall(transcript: Transcript, id: string, status: "in_progress" | "completed"): void {
  const update = {
    sessionUpdate: "tool_call",
    toolCallId: id,
    title: id,
    status,
    content: [{ type: "terminal", terminalId: `term-${id}` }],
  } as SessionUpdate;
  transcript.applyEvent({ sessionId: "s", seq: ++seq, kind: "update", payload: { update } as never, at: 0 });
}

const running = (output: string): TerminalOutputResult => ({ output, truncated: false, exitStatus: null });
const exited = (output: string): TerminalOutputResult => ({ output, truncated: false, exitStatus: { exitCode: 0, signal: null } });

/** Berth's answers to terminal reads, given one by one as the test says. */
class Answers {
  readonly asked: string[] = [];
  private pending: { resolve: (output: TerminalOutputResult) => void; reject: (error: unknown) => void }[] = [];
  readonly read = (terminalId: string): Promise<TerminalOutputResult> => {
    this.asked.push(terminalId);
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  };
  async answer(with_: TerminalOutputResult | Error): Promise<void> {
    await expect.poll(() => this.pending.length).toBeGreaterThan(0);
    const next = this.pending.shift()!;
    if (with_ instanceof Error) next.reject(with_);
    else next.resolve(with_);
  }
}

/** A page: its transcript, Berth's answers, the follower and its rounds, ticked by hand. */
function page(linkAllows: () => boolean = () => true) {
  const transcript = new Transcript();
  const answers = new Answers();
  const rounds: { run: (() => void) | null } = { run: null };
  const follower = new TerminalFollower(transcript, answers.read, linkAllows, (_ms, run) => {
    rounds.run = run;
    return () => {
      rounds.run = null;
    };
  });
  transcript.subscribe(() => follower.update());
  const outputOf = (id: string): unknown =>
    (transcript.entries.find((e) => e.kind === "tool" && e.call.toolCallId === id) as { outputs: Map<string, unknown> }).outputs.get(`term-${id}`);
  return { transcript, answers, rounds, follower, outputOf };
}

describe("following a running command's output", () => {
  it("reads it as it grows, until the command exited, then stops", async () => {
    const { transcript, answers, rounds, outputOf } = page();
    toolCall(transcript, "make", "in_progress");
    expect(rounds.run).not.toBeNull();
    await answers.answer(running("one\n"));
    await expect.poll(() => outputOf("make")).toEqual(running("one\n"));
    rounds.run?.();
    await answers.answer(exited("one\ntwo\n"));
    await expect.poll(() => outputOf("make")).toEqual(exited("one\ntwo\n"));
    expect(rounds.run).toBeNull();
    expect(answers.asked).toEqual(["term-make", "term-make"]);
  });

  it("reads one round at a time: a round due while one waits for Berth reads nothing more", async () => {
    const { transcript, answers, rounds, outputOf } = page();
    toolCall(transcript, "make", "in_progress");
    rounds.run?.();
    rounds.run?.();
    expect(answers.asked).toEqual(["term-make"]);
    await answers.answer(running("one\n"));
    await expect.poll(() => outputOf("make")).toEqual(running("one\n"));
  });

  it("gives up on a terminal that is gone, and tries again next round when Berth was out of reach", async () => {
    const { transcript, answers, rounds, outputOf } = page();
    toolCall(transcript, "gone", "in_progress");
    toolCall(transcript, "make", "in_progress");
    // The round under way started before the second tool call: it reads the first terminal only.
    await answers.answer(new ApiError(404, "terminal_not_found", "no such terminal"));
    await expect
      .poll(() => {
        rounds.run?.();
        return answers.asked;
      })
      .toEqual(["term-gone", "term-make"]);
    await answers.answer(new TypeError("Failed to fetch"));
    // Rounds come until one reads again (the failed one has ended).
    await expect
      .poll(() => {
        rounds.run?.();
        return answers.asked;
      })
      .toEqual(["term-gone", "term-make", "term-make"]);
    await answers.answer(running("back\n"));
    await expect.poll(() => outputOf("make")).toEqual(running("back\n"));
    // The gone terminal was not asked for again.
    expect(answers.asked).toEqual(["term-gone", "term-make", "term-make"]);
  });

  it("reads nothing while the link does not allow it, and starts again once it does", async () => {
    let allowed = false;
    const { transcript, answers, rounds, follower, outputOf } = page(() => allowed);
    toolCall(transcript, "make", "in_progress");
    expect(rounds.run).toBeNull();
    expect(answers.asked).toEqual([]);
    allowed = true;
    follower.update();
    await answers.answer(running("one\n"));
    await expect.poll(() => outputOf("make")).toEqual(running("one\n"));
    allowed = false;
    follower.update();
    expect(rounds.run).toBeNull();
  });

  it("shows nothing more once stopped, not even an answer on its way", async () => {
    const { transcript, answers, rounds, follower, outputOf } = page();
    toolCall(transcript, "make", "in_progress");
    follower.stop();
    expect(rounds.run).toBeNull();
    await answers.answer(running("late\n"));
    toolCall(transcript, "next", "in_progress");
    expect(rounds.run).toBeNull();
    expect(answers.asked).toEqual(["term-make"]);
    expect(outputOf("make")).toBeUndefined();
  });
});
