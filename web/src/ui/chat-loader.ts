import { useEffect, useState } from "preact/hooks";
import type { ChatSession } from "../chat/chat-session.js";
import { retriableImport } from "../chunk-import.js";
import type { ChatPanel } from "./ChatPanel.js";

/**
 * The chat (a session's transcript, its Markdown, the virtualized list) is a chunk of its own:
 * the list does not evaluate it on its first load. It loads when a session is opened, and a
 * page opened on a session's address waits for it before its first render (see main.tsx).
 */
export interface ChatModule {
  readonly ChatPanel: typeof ChatPanel;
  readonly ChatSession: typeof ChatSession;
}

/** How long after a failed load (Berth out of reach) it is tried again while a chat is wanted. */
const RETRY_MS = 2_000;

let loaded: ChatModule | null = null;
let loading: Promise<ChatModule> | null = null;
const importPanel = retriableImport(() => import("./ChatPanel.js"));
const importSession = retriableImport(() => import("../chat/chat-session.js"));

export function loadChat(): Promise<ChatModule> {
  loading ??= Promise.all([importPanel(), importSession()]).then(
    ([panel, session]) => {
      loaded = { ChatPanel: panel.ChatPanel, ChatSession: session.ChatSession };
      return loaded;
    },
    (error: unknown) => {
      loading = null;
      throw error;
    },
  );
  return loading;
}

/** What `useChatModule` gives: the module once loaded, and whether the last try failed (then it is tried again). */
export interface ChatModuleState {
  readonly module: ChatModule | null;
  readonly failed: boolean;
}

/** The chat module once loaded (null until then); loads it while `wanted`, trying again if it fails. */
export function useChatModule(wanted: boolean): ChatModuleState {
  const [module, setModule] = useState(loaded);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!wanted || module) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const attempt = (): void => {
      loadChat().then(
        (chat) => {
          if (stopped) return;
          setFailed(false);
          setModule(chat);
        },
        () => {
          if (stopped) return;
          setFailed(true);
          timer = setTimeout(attempt, RETRY_MS);
        },
      );
    };
    attempt();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [wanted, module]);
  // Loaded meanwhile (a new session's chat, loaded before its address is routed to): at once, not a render later.
  const shown = module ?? loaded;
  return { module: shown, failed: wanted && shown === null && failed };
}
