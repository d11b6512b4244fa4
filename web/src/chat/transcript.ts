import type { ContentBlock, PlanEntry, SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";

type MessageRole = "user" | "agent" | "thought";

export interface ToolCallView {
  readonly toolCallId: string;
  readonly title: string;
  readonly toolKind: string | null;
  readonly status: string;
  readonly content: readonly ToolCallContent[];
  readonly rawOutput: unknown;
}

/** One thing in a conversation as the chat shows it: streamed chunks are merged into messages. */
export type TranscriptEntry =
  | {
      readonly kind: "message";
      readonly role: MessageRole;
      readonly messageId: string | null;
      readonly text: string;
      /** Written by Berth itself (an interruption, a crash), not by the agent. */
      readonly notice: boolean;
    }
  | { readonly kind: "tool"; readonly call: ToolCallView }
  | { readonly kind: "plan"; readonly entries: readonly PlanEntry[] }
  | { readonly kind: "notice"; readonly severity: string; readonly title: string; readonly description: string | null }
  /** How a prompt sent from this page ended, when it did not simply end its turn. */
  | { readonly kind: "stop"; readonly outcome: string };

export type Transcript = readonly TranscriptEntry[];

const roleOf = {
  user_message_chunk: "user",
  agent_message_chunk: "agent",
  agent_thought_chunk: "thought",
} as const;

/** The transcript after one `session/update`. Updates with nothing to show leave it as it is. */
export function applyUpdate(transcript: Transcript, update: SessionUpdate): Transcript {
  switch (update.sessionUpdate) {
    case "user_message_chunk":
    case "agent_message_chunk":
    case "agent_thought_chunk":
      return appendText(transcript, roleOf[update.sessionUpdate], update.messageId ?? null, blockText(update.content), isNotice(update._meta));
    case "tool_call":
      return [
        ...transcript,
        {
          kind: "tool",
          call: {
            toolCallId: update.toolCallId,
            title: update.title,
            toolKind: update.kind ?? null,
            status: update.status ?? "pending",
            content: update.content ?? [],
            rawOutput: update.rawOutput,
          },
        },
      ];
    case "tool_call_update":
      return updateToolCall(transcript, update);
    case "plan":
      return transcript.at(-1)?.kind === "plan"
        ? [...transcript.slice(0, -1), { kind: "plan", entries: update.entries }]
        : [...transcript, { kind: "plan", entries: update.entries }];
    case "notice":
      return [...transcript, { kind: "notice", severity: update.severity, title: update.title, description: update.description ?? null }];
    default:
      return transcript;
  }
}

/** A prompt typed on this page, shown at once; the server does not echo it back to its sender. */
export function appendPrompt(transcript: Transcript, text: string): Transcript {
  return [...transcript, { kind: "message", role: "user", messageId: null, text, notice: false }];
}

export function appendStop(transcript: Transcript, outcome: string): Transcript {
  return [...transcript, { kind: "stop", outcome }];
}

function appendText(transcript: Transcript, role: MessageRole, messageId: string | null, text: string, notice: boolean): Transcript {
  const last = transcript.at(-1);
  if (last?.kind === "message" && last.role === role && last.messageId === messageId && last.notice === notice) {
    return [...transcript.slice(0, -1), { ...last, text: last.text + text }];
  }
  return [...transcript, { kind: "message", role, messageId, text, notice }];
}

type ToolCallUpdate = Extract<SessionUpdate, { sessionUpdate: "tool_call_update" }>;

function updateToolCall(transcript: Transcript, update: ToolCallUpdate): Transcript {
  const index = transcript.findLastIndex((e) => e.kind === "tool" && e.call.toolCallId === update.toolCallId);
  const entry = transcript[index];
  const call: ToolCallView =
    entry?.kind === "tool"
      ? entry.call
      : { toolCallId: update.toolCallId, title: "tool call", toolKind: null, status: "pending", content: [], rawOutput: undefined };
  const next: TranscriptEntry = {
    kind: "tool",
    call: {
      toolCallId: call.toolCallId,
      title: update.title ?? call.title,
      toolKind: update.kind ?? call.toolKind,
      status: update.status ?? call.status,
      // ACP: content in an update replaces the tool call's content.
      content: update.content ?? call.content,
      rawOutput: update.rawOutput ?? call.rawOutput,
    },
  };
  return index < 0 ? [...transcript, next] : transcript.map((e, i) => (i === index ? next : e));
}

export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return "[image]";
    case "audio":
      return "[audio]";
    case "resource_link":
      return `[${block.name}](${block.uri})`;
    case "resource":
      return "text" in block.resource ? block.resource.text : `[resource ${block.resource.uri}]`;
  }
}

function isNotice(meta: { [key: string]: unknown } | null | undefined): boolean {
  return meta != null && "berth/notice" in meta;
}
