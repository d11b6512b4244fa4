import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { ConfigError, parseConfig } from "../../src/config/load-config.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import type { WebhookPayload } from "../../src/server/webhook-notifier.js";
import { WebhookNotifier } from "../../src/server/webhook-notifier.js";
import { closeAllHosts, startHost, waitUntil, type HostFixture } from "../host/host-harness.js";
import { cleanUp, startFixture } from "./server-harness.js";

/** What the receiver got: one POST each. */
interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: WebhookPayload;
}

/** How the receiver answers the n-th request (from 0): a status, or `hang` (never answers). */
type Answer = number | "hang";

interface Receiver {
  readonly url: string;
  readonly received: Received[];
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
const notifiers: WebhookNotifier[] = [];

afterEach(async () => {
  for (const notifier of notifiers.splice(0)) notifier.close();
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  await closeAllHosts();
  await cleanUp();
});

/** A real HTTP receiver on loopback that records every POST and answers as `answers` says. */
async function startReceiver(answers: (index: number) => Answer = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const index = received.length;
      received.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as WebhookPayload,
      });
      const answer = answers(index);
      if (answer === "hang") return void hanging.push(res);
      res.writeHead(answer, { "Content-Type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks/s3cr3t-path?key=s3cr3t-query`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  receivers.push(receiver);
  return receiver;
}

type LogLine = { msg: string; [field: string]: unknown };

/** A host on a virtual clock with a notifier whose log lines are kept. */
async function notifying(
  url: string,
  webhook: Partial<NonNullable<NonNullable<ConfigInput["notify"]>["webhook"]>> = {},
  retryDelaysMs = [1_000, 2_000],
) {
  const clock = new VirtualClock();
  const fixture = await startHost({ clock });
  const logs: LogLine[] = [];
  const raw: string[] = [];
  const log = pino(
    { level: "debug" },
    {
      write: (line: string) => {
        raw.push(line);
        logs.push(JSON.parse(line) as LogLine);
      },
    },
  );
  const config = parseConfig({ notify: { webhook: { url, headers: { Authorization: "Bearer hook-credential" }, ...webhook } } }).notify.webhook!;
  const notifier = new WebhookNotifier({ host: fixture.host, config, log, dashboardUrl: "http://127.0.0.1:7420", retryDelaysMs });
  notifiers.push(notifier);
  return { clock, fixture, logs, raw, notifier };
}

/** Starts a turn in which the demo agent asks a permission question; resolves once it is pending. */
async function askQuestion(fixture: HostFixture, text = "Deploy to production?") {
  const session = await fixture.host.createSession({ cwd: fixture.workDir });
  const turn = fixture.host.prompt(session.id, [{ type: "text", text: `/ask ${text}` }]);
  await waitUntil(() => fixture.host.pendingQuestions(session.id).length === 1, "the question is pending");
  return { session, turn, question: fixture.host.pendingQuestions(session.id)[0]! };
}

describe("notify.webhook: a question waiting longer than afterMinutes", () => {
  it("is POSTed once it has waited afterMinutes, retried with backoff after a 503, and logged without its secrets", async () => {
    const receiver = await startReceiver((index) => (index === 0 ? 503 : 200));
    const { clock, fixture, logs, raw } = await notifying(receiver.url, { afterMinutes: 5 });
    const { session, turn, question } = await askQuestion(fixture);
    const askedAt = question.askedAt;

    await clock.advance(4 * 60_000);
    await clock.advance(60_000);
    await waitUntil(() => logs.some((line) => line.msg === "webhook failed; retrying"), "the first attempt failed");
    expect(receiver.received).toHaveLength(1);
    const first = receiver.received[0]!;
    // Sent when the clock reached five minutes, not before.
    expect(first.body.at).toBe(askedAt + 5 * 60_000);
    expect(first.method).toBe("POST");
    expect(first.path).toBe("/hooks/s3cr3t-path?key=s3cr3t-query");
    expect(first.headers["content-type"]).toBe("application/json");
    expect(first.headers.authorization).toBe("Bearer hook-credential");
    expect(first.headers["user-agent"]).toMatch(/^berth\//);
    expect(first.body).toMatchObject({
      event: "question_waiting",
      session: { id: session.id, agent: "demo", cwd: fixture.workDir, workspace: null },
      question: { id: question.id, kind: "permission", summary: "Deploy to production?", askedAt, waitedMs: 5 * 60_000 },
      turn: null,
      link: `http://127.0.0.1:7420/#/sessions/${session.id}`,
    });
    expect(first.body.text).toContain("has waited 5 minutes for an answer: Deploy to production?");
    expect(logs.find((line) => line.msg === "webhook failed; retrying")).toMatchObject({ attempt: 1, reason: "HTTP 503", retryInMs: 1_000 });

    await clock.advance(1_000);
    await waitUntil(() => logs.some((line) => line.msg === "webhook delivered"), "the retry was delivered");
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toEqual(first.body);
    expect(logs.find((line) => line.msg === "webhook delivered")).toMatchObject({
      event: "question_waiting",
      sessionId: session.id,
      status: 200,
      attempt: 2,
      receiver: new URL(receiver.url).origin,
    });
    // Neither the hook's path and query nor its header ever reach a log line.
    for (const secret of ["s3cr3t-path", "s3cr3t-query", "hook-credential"]) expect(raw.join("\n")).not.toContain(secret);

    await fixture.host.answerQuestion(question.id, { optionId: "allow" });
    await turn;
  });

  it("is not sent for a question answered in time; a later question still is", async () => {
    const receiver = await startReceiver();
    const { clock, fixture } = await notifying(receiver.url, { afterMinutes: 5 });
    const early = await askQuestion(fixture, "Answered in time?");
    await clock.advance(2 * 60_000);
    await fixture.host.answerQuestion(early.question.id, { optionId: "allow" });
    await early.turn;
    await clock.advance(10 * 60_000);

    const late = await askQuestion(fixture, "Left waiting?");
    await clock.advance(5 * 60_000);
    await waitUntil(() => receiver.received.length > 0, "the second question was sent");
    expect(receiver.received.map((r) => r.body.question?.summary)).toEqual(["Left waiting?"]);
    await fixture.host.answerQuestion(late.question.id, { optionId: "allow" });
    await late.turn;
  });

  it("gives up at once on a 4xx, and retries a receiver that is not listening", async () => {
    const refusing = await startReceiver(() => 404);
    const { clock, fixture, logs } = await notifying(refusing.url, { afterMinutes: 0 });
    const asked = await askQuestion(fixture);
    await clock.advance(0);
    await waitUntil(() => logs.some((line) => line.msg === "webhook given up"), "a 404 is given up");
    expect(logs.find((line) => line.msg === "webhook given up")).toMatchObject({ attempts: 1, reason: "HTTP 404" });
    expect(logs.some((line) => line.msg === "webhook failed; retrying")).toBe(false);
    await fixture.host.answerQuestion(asked.question.id, { optionId: "allow" });
    await asked.turn;

    // A receiver that is gone: connection refused, retried, then given up after the last wait.
    const gone = await startReceiver();
    await gone.close();
    receivers.splice(receivers.indexOf(gone), 1);
    const second = await notifying(gone.url, { afterMinutes: 0 }, [1_000]);
    const again = await askQuestion(second.fixture);
    await second.clock.advance(0);
    await waitUntil(() => second.logs.some((line) => line.msg === "webhook failed; retrying"), "refused, retrying");
    expect(second.logs.find((line) => line.msg === "webhook failed; retrying")).toMatchObject({ reason: "ECONNREFUSED", retryInMs: 1_000 });
    await second.clock.advance(1_000);
    await waitUntil(() => second.logs.some((line) => line.msg === "webhook given up"), "given up after the last retry");
    expect(second.logs.find((line) => line.msg === "webhook given up")).toMatchObject({ attempts: 2, reason: "ECONNREFUSED" });
    await second.fixture.host.answerQuestion(again.question.id, { optionId: "allow" });
    await again.turn;
  });

  it("never holds the host up: turns run while the receiver does not answer", async () => {
    const receiver = await startReceiver(() => "hang");
    const { clock, fixture } = await notifying(receiver.url, { afterMinutes: 0 });
    const asked = await askQuestion(fixture);
    await clock.advance(0);
    await waitUntil(() => receiver.received.length === 1, "the POST is in flight and unanswered");
    const other = await fixture.host.createSession({ cwd: fixture.workDir });
    expect(await fixture.host.prompt(other.id, [{ type: "text", text: "still here" }])).toMatchObject({ stopReason: "end_turn" });
    await fixture.host.answerQuestion(asked.question.id, { optionId: "allow" });
    await asked.turn;
  });
});

describe("notify.webhook: the end of a long turn", () => {
  it("is sent for a turn that ran at least afterMinutes, not for a short one", async () => {
    const receiver = await startReceiver();
    const { clock, fixture } = await notifying(receiver.url, { afterMinutes: 5, events: ["turn_ended"] });
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    await fixture.host.prompt(session.id, [{ type: "text", text: "a short turn" }]);

    const long = fixture.host.prompt(session.id, [{ type: "text", text: "/sleep 1h" }]);
    await waitUntil(() => fixture.host.getSession(session.id)?.turnActive === true, "the long turn runs");
    await clock.advance(6 * 60_000);
    await fixture.host.cancel(session.id);
    expect(await long).toMatchObject({ stopReason: "cancelled" });
    await waitUntil(() => receiver.received.length === 1, "the long turn's end was sent");
    const { body } = receiver.received[0]!;
    expect(body).toMatchObject({ event: "turn_ended", question: null, turn: { stopReason: "cancelled", error: null }, session: { id: session.id } });
    expect(body.turn!.endedAt - body.turn!.startedAt).toBe(6 * 60_000);
    expect(body.text).toContain("ended (cancelled) after 6 minutes");
  });

  it("question_waiting only: a long turn's end is not sent", async () => {
    const receiver = await startReceiver();
    const { clock, fixture } = await notifying(receiver.url, { afterMinutes: 1, events: ["question_waiting"] });
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    const long = fixture.host.prompt(session.id, [{ type: "text", text: "/sleep 1h" }]);
    await waitUntil(() => fixture.host.getSession(session.id)?.turnActive === true, "the long turn runs");
    await clock.advance(10 * 60_000);
    await fixture.host.cancel(session.id);
    await long;
    // The next thing sent is a question; nothing came before it.
    const asked = await askQuestion(fixture);
    // The clock may pass the minute before the notifier hears of the question (records arrive once committed): it is sent all the same.
    await clock.advance(60_000);
    await waitUntil(() => receiver.received.length > 0, "the question was sent");
    expect(receiver.received.map((r) => r.body.event)).toEqual(["question_waiting"]);
    await fixture.host.answerQuestion(asked.question.id, { optionId: "allow" });
    await asked.turn;
  });
});

describe("notify.webhook: what agents and people wrote, in the message's text", () => {
  // Slack's and Mattermost's own markup: a link with a text of its choosing, mentions that notify a whole channel.
  const hostile = "<https://evil.example/steal|Allow once> <!channel> <@U024BE7LH> & @all [Open Berth](https://evil.example)";
  const escaped =
    "&lt;https://evil.example/steal|Allow once&gt; &lt;!channel&gt; &lt;@\u2060U024BE7LH&gt; &amp; @\u2060all [Open Berth]\u2060(https://evil.example)";

  it("a question's summary and the session's title are escaped in text, as written in the other fields; Berth's link works", async () => {
    const receiver = await startReceiver();
    const { clock, fixture } = await notifying(receiver.url, { afterMinutes: 0 });
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    fixture.host.renameSession(session.id, `Title ${hostile}`);
    const turn = fixture.host.prompt(session.id, [{ type: "text", text: `/ask ${hostile}` }]);
    await waitUntil(() => fixture.host.pendingQuestions(session.id).length === 1, "the question is pending");
    await clock.advance(0);
    await waitUntil(() => receiver.received.length === 1, "the question was sent");
    const { body } = receiver.received[0]!;
    expect(body.text).toBe(`Berth: “Title ${escaped}” (demo) has waited less than a minute for an answer: ${escaped}`);
    // Scripts read the fields: they carry the text as written.
    expect(body.session.title).toBe(`Title ${hostile}`);
    expect(body.question!.summary).toBe(hostile);
    expect(body.link).toBe(`http://127.0.0.1:7420/#/sessions/${session.id}`);
    await fixture.host.answerQuestion(fixture.host.pendingQuestions(session.id)[0]!.id, { optionId: "allow" });
    await turn;
  });

  it("a failed turn's error is escaped in text, line breaks included", async () => {
    const receiver = await startReceiver();
    const { fixture } = await notifying(receiver.url, { afterMinutes: 0, events: ["turn_ended"] });
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    await fixture.host.prompt(session.id, [{ type: "text", text: `/fail -32603 ${hostile}\n# Heading` }]).catch(() => undefined);
    await waitUntil(() => receiver.received.length === 1, "the failed turn's end was sent");
    const { body } = receiver.received[0]!;
    expect(body.turn!.error).toContain(`${hostile}\n# Heading`);
    expect(body.text).toContain(`${escaped} # Heading`);
    expect(body.text).not.toMatch(/[<>\n]/);
  });
});

describe("notify.webhook in the configuration", () => {
  it("berth's host sends with afterMinutes 0 as soon as a question is asked", async () => {
    const receiver = await startReceiver();
    const fixture = await startFixture({ config: { notify: { webhook: { url: receiver.url, afterMinutes: 0 } } } });
    const session = await fixture.berth.host.createSession({ cwd: fixture.workDir });
    const turn = fixture.berth.host.prompt(session.id, [{ type: "text", text: "/ask Ship it?" }]);
    await waitUntil(() => receiver.received.length === 1, "the question was sent");
    const sent = receiver.received[0]!.body;
    expect(sent).toMatchObject({ event: "question_waiting", link: `${fixture.url}/#/sessions/${session.id}` });
    // docs/serve.md shows the payload with exactly the fields Berth sends, and a configuration that loads.
    const serveDoc = readFileSync(new URL("../../docs/serve.md", import.meta.url), "utf8");
    const blocks = [...serveDoc.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((match) => JSON.parse(match[1]!) as Record<string, unknown>);
    const documented = blocks.find((block) => block.event === "question_waiting")!;
    expect(shape(documented)).toEqual(shape(sent));
    expect(parseConfig(blocks.find((block) => "notify" in block)).notify.webhook).toMatchObject({
      afterMinutes: 5,
      events: ["question_waiting", "turn_ended"],
    });
    await fixture.berth.host.answerQuestion(receiver.received[0]!.body.question!.id, { optionId: "allow" });
    await turn;
  });

  it("names what is wrong in a bad webhook", () => {
    const bad = (webhook: unknown) => () => parseConfig({ notify: { webhook } });
    expect(bad({ url: "ftp://example.test/x" })).toThrow(ConfigError);
    expect(bad({ url: "ftp://example.test/x" })).toThrow(/notify\.webhook\.url: expected an http:\/\/ or https:\/\/ URL/);
    expect(bad({ url: "http://127.0.0.1/x", afterMinutes: -1 })).toThrow(/notify\.webhook\.afterMinutes: expected 0 or more minutes/);
    expect(bad({ url: "http://127.0.0.1/x", events: ["sometimes"] })).toThrow(
      /notify\.webhook\.events\.0: expected "question_waiting" or "turn_ended"/,
    );
    expect(bad({ url: "http://127.0.0.1/x", colour: "red" })).toThrow(/notify\.webhook: unknown key "colour"/);
    expect(parseConfig({}).notify).toEqual({});
  });
});

/** The keys of an object, nested, with the type of each leaf: what a documented example must match. */
function shape(value: unknown): unknown {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, shape(inner)]));
}
