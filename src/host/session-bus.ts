import type { SessionNotification } from "@agentclientprotocol/sdk";
import type { RelayedRequest } from "./relayed-request.js";
import type { QuestionView } from "./views.js";

/** What a session's subscribers (the server's clients) receive, live and in order. */
export type SessionEvent =
  /**
   * `text`: the update's JSON text as the agent wrote it and the journal stored it (`{"update":…,"_meta":…}`), if it came
   * from the agent; `frame`: that text's frame, made by the first client sent it and shared by the session's other
   * plain clients (one string: each copy would be flattened and encoded again); `except`: the holder not to send it to
   * live (it follows that holder's own request: `Journal.announce`).
   */
  | {
      readonly type: "update";
      readonly seq: number;
      readonly notification: SessionNotification;
      readonly text?: string;
      frame?: string;
      readonly except?: string;
    }
  | { readonly type: "question_asked"; readonly question: QuestionView }
  | { readonly type: "question_resolved"; readonly questionId: string; readonly state: "answered" | "cancelled" }
  /** `origin`: who prompted, as the prompt named itself (a connection's own prompts are not echoed back to it). */
  | { readonly type: "turn_started"; readonly seq: number; readonly origin: string | undefined }
  | { readonly type: "turn_ended"; readonly seq: number; readonly stopReason: string | null; readonly error: string | null }
  /** The agent asks something Berth does not answer (an extension method): a client may claim it. */
  | { readonly type: "agent_request"; readonly request: RelayedRequest }
  /** The agent announces something Berth does not act on (an extension notification). */
  | { readonly type: "agent_notification"; readonly method: string; readonly params: unknown };

export type SessionListener = (event: SessionEvent) => void;

/** Fan-out of each session's events to its subscribers. */
export class SessionBus {
  private readonly listeners = new Map<string, Set<SessionListener>>();

  constructor(private readonly onListenerForgotten: (sessionId: string, error: unknown) => void) {}

  subscribe(sessionId: string, listener: SessionListener): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) this.listeners.set(sessionId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(sessionId) === set) this.listeners.delete(sessionId);
    };
  }

  publish(sessionId: string, event: SessionEvent): void {
    const set = this.listeners.get(sessionId);
    if (!set) return;
    // A failing subscriber must not stop the others or the agent's stream; it is forgotten, and that is reported.
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (error) {
        set.delete(listener);
        this.onListenerForgotten(sessionId, error);
      }
    }
  }
}
