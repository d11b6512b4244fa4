import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { sessionSettingsSchema } from "./session-state.js";

const entrySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("user_message"), messageId: z.string(), text: z.string() }),
  z.object({ kind: z.literal("agent_message"), messageId: z.string(), text: z.string() }),
  // A flood is recorded by its shape, not its megabytes; its chunks are regenerated on replay.
  z.object({
    kind: z.literal("agent_flood"),
    messageId: z.string(),
    count: z.number().int().positive(),
    bytes: z.number().int().positive(),
  }),
  z.object({
    kind: z.literal("tool_call"),
    toolCallId: z.string(),
    title: z.string(),
    status: z.enum(["completed", "failed"]),
    output: z.string(),
  }),
]);

const conversationSchema = z.object({
  version: z.literal(1),
  sessionId: z.string(),
  cwd: z.string(),
  entries: z.array(entrySchema),
  /** Absent until the session's mode, model or options first change. */
  settings: sessionSettingsSchema.optional(),
});

/** One recorded step of a conversation, enough to replay it. */
export type ConversationEntry = z.infer<typeof entrySchema>;
export type Conversation = z.infer<typeof conversationSchema>;

/** Session ids become file names, so only plain ids are accepted. */
const sessionIdPattern = /^[A-Za-z0-9_-]{1,128}$/;

function isValidSessionId(sessionId: string): boolean {
  return sessionIdPattern.test(sessionId);
}

/** Keeps each session's conversation in `<dir>/<sessionId>.json`. */
export class ConversationStore {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** The stored conversation, or `undefined` if the session was never saved here. */
  read(sessionId: string): Conversation | undefined {
    if (!isValidSessionId(sessionId)) return undefined;
    const path = this.pathOf(sessionId);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const parsed = conversationSchema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new Error(`corrupt conversation file ${path}: ${z.prettifyError(parsed.error)}`);
    }
    return parsed.data;
  }

  /** Every stored conversation with when it was last written, newest first (`session/list`). */
  list(): { conversation: Conversation; updatedAt: Date }[] {
    const stored = readdirSync(this.dir).flatMap((name) => {
      const sessionId = name.endsWith(".json") ? name.slice(0, -".json".length) : "";
      const conversation = this.read(sessionId);
      return conversation ? [{ conversation, updatedAt: statSync(this.pathOf(sessionId)).mtime }] : [];
    });
    return stored.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime());
  }

  /** Writes atomically, so a crash never leaves a half-written file. */
  save(conversation: Conversation): void {
    const path = this.pathOf(conversation.sessionId);
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(conversation));
    renameSync(temporary, path);
  }

  private pathOf(sessionId: string): string {
    if (!isValidSessionId(sessionId)) throw new Error(`invalid session id "${sessionId}"`);
    return join(this.dir, `${sessionId}.json`);
  }
}
