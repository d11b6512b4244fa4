import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import type { TerminalOutputResult } from "../host/views.js";
import { EmbeddedTerminals, type EmbeddedTerminal } from "../protocol/embedded-terminals.js";
import { RAW_TERMINALS_META } from "../protocol/meta-keys.js";

/** How often a running command's output is sent again while it changes. */
const MIRROR_INTERVAL_MS = 500;

type ToolCallUpdate = Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>;

/**
 * How a terminal the agent embedded in its updates (a command it ran itself, `_meta.terminal_output`) reaches this
 * client: `as_sent` to one that declared `clientCapabilities._meta.terminal_output`, else `as_text` (its output so
 * far, read from the updates' `_meta`).
 */
export type EmbeddedShown = "as_sent" | "as_text";

/** How this client is shown a terminal the agent embedded, and how much of its output is kept (`terminalOutputLimit`). */
export interface EmbeddedOptions {
  readonly shown: EmbeddedShown;
  readonly outputLimit: number;
}

/**
 * A tool call's `terminal` content names a terminal Berth runs, which the client has never heard
 * of, so it could show nothing of a running command. For such clients the content becomes the
 * command's output as text, and while the command runs the tool call is sent again as its output
 * grows, until it exits. A terminal the agent embedded is shown as {@link EmbeddedShown} says; as text, it is followed
 * the same way, so its output is sent again at most every interval, not on every chunk the agent sends.
 */
export class TerminalMirror {
  private readonly embedded: EmbeddedTerminals;
  private readonly embeddedShown: EmbeddedShown;
  /** Tool calls that show a running command: their content as the agent sent it, and what was last sent. */
  private readonly following = new Map<string, { content: ToolCallContent[]; shown: string }>();
  /** The last text shown for each terminal, shown again once its output is no longer kept (released). */
  private readonly lastShown = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly readOutput: (terminalId: string) => TerminalOutputResult | undefined,
    private readonly send: (update: SessionUpdate) => void,
    embedded: EmbeddedOptions,
    private readonly intervalMs = MIRROR_INTERVAL_MS,
  ) {
    this.embeddedShown = embedded.shown;
    // A client shown the terminal as the agent sent it needs only to know it is the agent's, not its output.
    this.embedded = new EmbeddedTerminals(embedded.shown === "as_text" ? embedded.outputLimit : 0);
  }

  /** The update as this client can show it; a tool call whose command still runs is followed. */
  rewrite(update: SessionUpdate): SessionUpdate {
    if (!isToolCall(update)) return update;
    this.embedded.absorb(update._meta);
    if (!update.content) return this.embeddedShown === "as_text" ? this.withEmbeddedOutput(update) : update;
    // The agent replaced the tool call's content (its final output): nothing more to follow.
    if (!update.content.some((item) => item.type === "terminal")) {
      for (const item of this.following.get(update.toolCallId)?.content ?? []) if (item.type === "terminal") this.lastShown.delete(item.terminalId);
      this.following.delete(update.toolCallId);
      return update;
    }
    return this.followed(update, update.content);
  }

  /** The update with `content` shown as text; followed while a command in it runs. */
  private followed(update: ToolCallUpdate, content: ToolCallContent[]): SessionUpdate {
    const rendered = this.render(content);
    if (rendered.running) {
      this.following.set(update.toolCallId, { content, shown: rendered.text });
      this.timer ??= setInterval(() => this.tick(), this.intervalMs).unref();
    } else {
      this.following.delete(update.toolCallId);
    }
    return { ...update, content: rendered.content };
  }

  /**
   * An update that carries only an embedded terminal's output (`_meta.terminal_output`): the output so far, as text,
   * the first time; while the tool call is followed the tick sends it (the whole output on every chunk would cost the
   * square of its length).
   */
  private withEmbeddedOutput(update: ToolCallUpdate): SessionUpdate {
    const terminalId = (update._meta?.terminal_output as { terminal_id?: unknown } | undefined)?.terminal_id;
    if (typeof terminalId !== "string" || !this.embedded.find(terminalId)) return update;
    if (this.following.has(update.toolCallId)) return update;
    return this.followed(update, [{ type: "terminal", terminalId }]);
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
      // The agent's own terminal: its updates bring its output, nothing to follow.
      const embedded = this.embedded.find(item.terminalId);
      if (embedded) {
        if (this.embeddedShown === "as_sent") return item;
        if (embedded.exit === null) running = true;
        const text = describeEmbedded(embedded);
        texts.push(text);
        return textOf(item.terminalId, text);
      }
      const output = this.readOutput(item.terminalId);
      if (output && output.exitStatus === null) running = true;
      if (!output) gone = true;
      const text = output ? describe(output) : (this.lastShown.get(item.terminalId) ?? GONE);
      if (output) this.lastShown.set(item.terminalId, text);
      texts.push(text);
      return textOf(item.terminalId, text);
    });
    return { content: rendered, text: texts.join("\n"), running, gone };
  }
}

function isToolCall(update: SessionUpdate): update is ToolCallUpdate {
  return update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update";
}

const GONE = "(the command's output is no longer kept)";

/** A terminal shown as text, naming the terminal it stands for. */
function textOf(terminalId: string, text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text }, _meta: { [RAW_TERMINALS_META]: { terminalId } } };
}

function describeEmbedded({ output, truncated, exit }: EmbeddedTerminal): string {
  return describe({ output, truncated, exitStatus: exit && { exitCode: exit.exitCode, signal: exit.signal } });
}

function describe(output: TerminalOutputResult): string {
  const head = output.truncated ? "…\n" : "";
  const status = output.exitStatus;
  const tail = status === null ? "" : status.signal ? `\n(killed by ${status.signal})` : `\n(exit code ${status.exitCode ?? "unknown"})`;
  return `\`\`\`\n${head}${output.output}\n\`\`\`${tail}`;
}
