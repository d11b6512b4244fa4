import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import type { TerminalOutputResult } from "../host/views.js";

/** How often a running command's output is sent again while it changes. */
const MIRROR_INTERVAL_MS = 500;
/** A client that asks for `terminal` content as the agent sent it sets this in its capabilities' `_meta`. */
export const RAW_TERMINALS_META = "berth/rawTerminals";

type ToolCallUpdate = Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>;

/**
 * A tool call's `terminal` content names a terminal Berth runs, which the client has never heard
 * of, so it could show nothing of a running command. For such clients the content becomes the
 * command's output as text, and while the command runs the tool call is sent again as its output
 * grows, until it exits.
 */
export class TerminalMirror {
  /** Tool calls that show a running command: their content as the agent sent it, and what was last sent. */
  private readonly following = new Map<string, { content: ToolCallContent[]; shown: string }>();
  /** The last text shown for each terminal, shown again once its output is no longer kept (released). */
  private readonly lastShown = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly readOutput: (terminalId: string) => TerminalOutputResult | undefined,
    private readonly send: (update: SessionUpdate) => void,
    private readonly intervalMs = MIRROR_INTERVAL_MS,
  ) {}

  /** The update as this client can show it; a tool call whose command still runs is followed. */
  rewrite(update: SessionUpdate): SessionUpdate {
    if (!isToolCall(update) || !update.content) return update;
    // The agent replaced the tool call's content (its final output): nothing more to follow.
    if (!update.content.some((item) => item.type === "terminal")) {
      for (const item of this.following.get(update.toolCallId)?.content ?? []) if (item.type === "terminal") this.lastShown.delete(item.terminalId);
      this.following.delete(update.toolCallId);
      return update;
    }
    const content = update.content;
    const rendered = this.render(content);
    if (rendered.running) {
      this.following.set(update.toolCallId, { content, shown: rendered.text });
      this.timer ??= setInterval(() => this.tick(), this.intervalMs).unref();
    } else {
      this.following.delete(update.toolCallId);
    }
    return { ...update, content: rendered.content };
  }

  close(): void {
    this.stop();
    this.lastShown.clear();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.following.clear();
  }

  private tick(): void {
    for (const [toolCallId, followed] of this.following) {
      const rendered = this.render(followed.content);
      if (!rendered.running) this.following.delete(toolCallId);
      if (rendered.gone || rendered.text === followed.shown) continue;
      followed.shown = rendered.text;
      this.send({ sessionUpdate: "tool_call_update", toolCallId, content: rendered.content });
    }
    if (this.following.size === 0) this.stop();
  }

  private render(content: ToolCallContent[]): { content: ToolCallContent[]; text: string; running: boolean; gone: boolean } {
    let running = false;
    let gone = false;
    const texts: string[] = [];
    const rendered = content.map((item): ToolCallContent => {
      if (item.type !== "terminal") return item;
      const output = this.readOutput(item.terminalId);
      if (output && output.exitStatus === null) running = true;
      if (!output) gone = true;
      const text = output ? describe(output) : (this.lastShown.get(item.terminalId) ?? GONE);
      if (output) this.lastShown.set(item.terminalId, text);
      texts.push(text);
      return { type: "content", content: { type: "text", text }, _meta: { [RAW_TERMINALS_META]: { terminalId: item.terminalId } } };
    });
    return { content: rendered, text: texts.join("\n"), running, gone };
  }
}

function isToolCall(update: SessionUpdate): update is ToolCallUpdate {
  return update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update";
}

const GONE = "(the command's output is no longer kept)";

function describe(output: TerminalOutputResult): string {
  const head = output.truncated ? "…\n" : "";
  const status = output.exitStatus;
  const tail = status === null ? "" : status.signal ? `\n(killed by ${status.signal})` : `\n(exit code ${status.exitCode ?? "unknown"})`;
  return `\`\`\`\n${head}${output.output}\n\`\`\`${tail}`;
}
