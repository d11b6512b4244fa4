import type { ToolCallContent } from "@agentclientprotocol/sdk";
import { useLayoutEffect, useRef } from "preact/hooks";
import { blockText, type ToolCallView, type Transcript, type TranscriptEntry } from "../chat/transcript.js";

/** How close to the bottom counts as "following" the conversation, so new text scrolls into view. */
const FOLLOW_SLACK_PX = 48;

/** The conversation: messages, thoughts, tool calls with their output, plans and notices. */
export function TranscriptView({ transcript, empty }: { transcript: Transcript; empty: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const element = ref.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, [transcript]);
  const scrolled = (): void => {
    const element = ref.current!;
    following.current = element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_SLACK_PX;
  };
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to scroll it
    <div ref={ref} class="transcript" role="log" aria-live="polite" aria-label="Conversation" tabIndex={0} onScroll={scrolled}>
      {transcript.length === 0 ? <p class="empty">{empty}</p> : transcript.map((entry, i) => <Entry key={i} entry={entry} />)}
    </div>
  );
}

function Entry({ entry }: { entry: TranscriptEntry }) {
  switch (entry.kind) {
    case "message":
      if (entry.notice) {
        return (
          <div class="message notice" role="note">
            <span class="who">Berth</span>
            <p>{entry.text}</p>
          </div>
        );
      }
      return (
        <div class={`message ${entry.role}`}>
          <span class="who">{entry.role === "user" ? "You" : entry.role === "agent" ? "Agent" : "Thinking"}</span>
          <p>{entry.text}</p>
        </div>
      );
    case "tool":
      return <ToolCall call={entry.call} />;
    case "plan":
      return (
        <div class="plan">
          <span class="who">Plan</span>
          <ol>
            {entry.entries.map((item, i) => (
              <li key={i} class={`plan-${item.status}`}>
                <span class="badge muted">{item.status.replace("_", " ")}</span> {item.content}
              </li>
            ))}
          </ol>
        </div>
      );
    case "notice":
      return (
        <div class={`message notice severity-${entry.severity}`} role="note">
          <span class="who">{entry.title}</span>
          {entry.description ? <p>{entry.description}</p> : null}
        </div>
      );
    case "stop":
      return (
        <p class="stop" role="status">
          Turn ended: {entry.outcome.replace("_", " ")}
        </p>
      );
  }
}

const statusTones: Record<string, string> = { pending: "muted", in_progress: "info", completed: "ok", failed: "danger" };

function ToolCall({ call }: { call: ToolCallView }) {
  const exit = exitOf(call.rawOutput);
  return (
    <article class="tool" aria-label={`Tool call: ${call.title}`}>
      <header>
        <span class="tool-kind">{call.toolKind ?? "tool"}</span>
        <code class="tool-title">{call.title}</code>
        <span class={`badge ${statusTones[call.status] ?? "muted"}`}>{call.status.replace("_", " ")}</span>
        {exit ? <span class="mono muted">{exit}</span> : null}
      </header>
      {call.content.map((content, i) => (
        <ToolContent key={i} content={content} running={call.status === "in_progress" || call.status === "pending"} />
      ))}
    </article>
  );
}

function ToolContent({ content, running }: { content: ToolCallContent; running: boolean }) {
  switch (content.type) {
    case "content":
      return <pre class="output">{blockText(content.content)}</pre>;
    case "diff":
      return (
        <div class="diff">
          <p class="path">{content.path}</p>
          <pre class="output">
            {content.oldText
              ? content.oldText
                  .split("\n")
                  .map((line) => `- ${line}\n`)
                  .join("")
              : ""}
            {content.newText
              .split("\n")
              .map((line) => `+ ${line}\n`)
              .join("")}
          </pre>
        </div>
      );
    case "terminal":
      return (
        <p class="terminal">
          <span class="badge info">terminal</span> <code>{content.terminalId}</code>
          {running ? " running on the host; its output shows here when the command ends" : null}
        </p>
      );
  }
}

function exitOf(rawOutput: unknown): string | null {
  if (typeof rawOutput !== "object" || rawOutput === null) return null;
  const { exitCode, signal } = rawOutput as { exitCode?: unknown; signal?: unknown };
  if (typeof signal === "string") return `signal ${signal}`;
  return typeof exitCode === "number" ? `exit ${exitCode}` : null;
}
