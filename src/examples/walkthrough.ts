#!/usr/bin/env node
/**
 * The README's walkthrough, as a program: connect to the running host, prompt the demo agent,
 * disconnect, reconnect and find the same process, and answer a question from another client.
 *
 *   npm start                                # in one terminal
 *   node dist/examples/walkthrough.js        # in another (add --data-dir DIR if you gave one to serve)
 */
import { client, methods, PROTOCOL_VERSION, type ClientConnection } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { locateHost } from "../cli/host-client.js";

const dataDirFlag = process.argv.indexOf("--data-dir");
const { url, token } = locateHost({ dataDir: dataDirFlag > 0 ? process.argv[dataDirFlag + 1] : undefined });
const acpUrl = `${url.replace(/^http/, "ws")}/acp`;
const say = (line: string) => console.log(line);

async function rest<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Reads until `accept` holds: the host learns of a closed socket, or a question, a moment later. */
async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An ACP client over WebSocket that collects what the agent streams. */
async function connect(name: string) {
  let updates = 0;
  let reply = "";
  const connection = client({ name })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates++;
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") reply += update.content.text;
    })
    .connect(createWebSocketStream(acpUrl, { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${token}` } }));
  await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  return {
    connection: connection as ClientConnection,
    replayed: () => updates,
    /** Prints the agent's streamed reply so far, then starts afresh. */
    printReply: () => {
      say(`   agent: ${reply}`);
      reply = "";
    },
  };
}

say(`1. Connecting to ${acpUrl}`);
const first = await connect("walkthrough-laptop");
const { sessionId } = await first.connection.agent.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
say(`   session ${sessionId} (demo agent, in ${process.cwd()})`);

say("2. Prompting the demo agent");
await first.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Hello, Berth!" }] });
first.printReply();
const { pid } = await rest<{ pid: number }>(`/api/sessions/${sessionId}`);
say(`   the agent runs as pid ${pid}`);

say("3. Closing the laptop: the connection goes away");
first.connection.close();
await first.connection.closed;
const unheld = await until(
  () => rest<{ holders: number; releaseAt: number | null }>(`/api/sessions/${sessionId}`),
  (session) => session.holders === 0 && session.releaseAt !== null,
  "the host released the laptop's hold",
);
say(`   holders: ${unheld.holders}; the agent is kept warm until ${new Date(unheld.releaseAt!).toLocaleTimeString()}`);

say("4. Reconnecting within the grace and loading the session");
const second = await connect("walkthrough-phone");
await second.connection.agent.request(methods.agent.session.load, { sessionId, cwd: process.cwd(), mcpServers: [] });
const replayedText = second.replayed();
const again = await rest<{ pid: number }>(`/api/sessions/${sessionId}`);
second.printReply();
say(`   history replayed (${replayedText} updates); pid ${again.pid}: ${again.pid === pid ? "the very same process, warm" : "a new process"}`);

say("5. The agent asks a question; another client answers it");
const asking = second.connection.agent.request(methods.agent.session.prompt, {
  sessionId,
  prompt: [{ type: "text", text: "/ask May I deploy to production?" }],
});
const { questions } = await until(
  () => rest<{ questions: Array<{ id: string }> }>(`/api/questions?sessionId=${sessionId}`),
  (pending) => pending.questions.length > 0,
  "the agent's question is pending",
);
const questionId = questions[0]!.id;
say(`   pending question ${questionId}; answering "allow" over REST (as \`berth answer ${questionId} allow\` would)`);
await rest(`/api/questions/${questionId}/answer`, { method: "POST", body: { optionId: "allow" } });
const { stopReason } = await asking;
say(`   the waiting turn completed (${stopReason}); it was answered by the other client:`);
second.printReply();

second.connection.close();
await second.connection.closed;
say("Done. `berth status` shows the session; its agent is stopped once the grace runs out.");
