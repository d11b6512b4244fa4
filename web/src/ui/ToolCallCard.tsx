import type { ToolCallContent } from "@agentclientprotocol/sdk";
import type { TerminalOutputResult } from "../api/types.js";
import type { ToolCallView } from "../chat/transcript.js";
import { blockText } from "../chat/transcript.js";
import { sandboxRefusalWords } from "../chat/sandbox-refusal.js";
import { markdownHtml } from "../content/markdown.js";
import { DiffView } from "./DiffView.js";

const statusTones: Record<string, string> = { pending: "muted", in_progress: "info", completed: "ok", failed: "danger" };

/**
 * A tool call: what it is, how it went, and its output, diffs and terminals. In a sandboxed session (`writable`: what
 * its sandbox lets it write) a write refused outside those places is explained under it.
 */
export function ToolCallCard({
  call,
  outputs,
  writable,
}: {
  call: ToolCallView;
  outputs: ReadonlyMap<string, TerminalOutputResult>;
  writable: readonly string[] | null;
}) {
  const exit = exitOf(call.rawOutput);
  const running = call.status === "in_progress" || call.status === "pending";
  const refusal = writable ? sandboxRefusalWords(outputText(call, outputs), writable) : undefined;
  return (
    <article class={`tool status-${call.status}`} aria-label={`Tool call: ${call.title}`}>
      <header>
        <span class="tool-kind">{call.toolKind ?? "tool"}</span>
        <code class="tool-title">{call.title}</code>
        <span class={`badge ${statusTones[call.status] ?? "muted"}`}>{call.status.replace("_", " ")}</span>
        {exit ? <span class="mono muted">{exit}</span> : null}
      </header>
      {call.content.map((content, i) => (
        <ToolContent key={i} content={content} running={running} output={content.type === "terminal" ? outputs.get(content.terminalId) : undefined} />
      ))}
      {refusal ? <p class="sandbox-refusal">{refusal}</p> : null}
    </article>
  );
}

function ToolContent({ content, running, output }: { content: ToolCallContent; running: boolean; output: TerminalOutputResult | undefined }) {
  switch (content.type) {
    case "content": {
      const text = blockText(content.content);
      // Fenced output (Berth's view of a terminal, most agents' own) is Markdown; anything else is shown as it came.
      return text.includes("```") ? (
        <div class={running ? "output md live" : "output md"} dangerouslySetInnerHTML={{ __html: markdownHtml(text) }} />
      ) : (
        <pre class="output">{text}</pre>
      );
    }
    case "diff":
      return <DiffView path={content.path} oldText={content.oldText ?? null} newText={content.newText} />;
    case "terminal":
      // Read from Berth until the command exits or its terminal is released: its output so far.
      if (output) {
        const status = output.exitStatus;
        const ended = status === null ? null : status.signal ? `killed by ${status.signal}` : `exit code ${status.exitCode ?? "unknown"}`;
        return (
          <pre class={running && status === null ? "output live" : "output"}>
            {output.truncated ? "…\n" : ""}
            {output.output}
            {ended ? `\n(${ended})` : null}
          </pre>
        );
      }
      return (
        <p class="terminal">
          <span class="badge info">terminal</span> <code>{content.terminalId}</code>
          {running ? " running on the host; its output shows here once read" : null}
        </p>
      );
  }
}

/** What a call printed that may tell of a refused write: a failed call's text, and its terminals' output. */
function outputText(call: ToolCallView, outputs: ReadonlyMap<string, TerminalOutputResult>): string {
  return call.content
    .map((content) => {
      if (content.type === "terminal") return outputs.get(content.terminalId)?.output ?? "";
      return content.type === "content" && call.status === "failed" ? blockText(content.content) : "";
    })
    .join("\n");
}

function exitOf(rawOutput: unknown): string | null {
  if (typeof rawOutput !== "object" || rawOutput === null) return null;
  const { exitCode, signal } = rawOutput as { exitCode?: unknown; signal?: unknown };
  if (typeof signal === "string") return `signal ${signal}`;
  return typeof exitCode === "number" ? `exit ${exitCode}` : null;
}
