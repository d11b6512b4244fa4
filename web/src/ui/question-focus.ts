import { navigate, sessionHref } from "./route.js";

/**
 * Brings the open conversation's question into view and gives it the focus. The transcript shows only the
 * rows in view: a question not among them is at its end (an agent waits on it), so the end comes first.
 */
export function showInConversation(questionId: string): void {
  const row = () => document.querySelector<HTMLElement>(`.transcript [data-question-id="${CSS.escape(questionId)}"]`);
  if (!row()) {
    const transcript = document.querySelector(".transcript");
    if (transcript) transcript.scrollTop = transcript.scrollHeight;
  }
  requestAnimationFrame(() => {
    const found = row();
    found?.scrollIntoView({ block: "nearest" });
    found?.focus();
  });
}

/**
 * Opens a question's session and, once its chat shows the question, brings it into view with the focus.
 * Gives up after a while: the question may be answered elsewhere meanwhile.
 */
export function openAtQuestion(sessionId: string, questionId: string): void {
  const selector = `.transcript [data-question-id="${CSS.escape(questionId)}"]`;
  navigate(sessionHref(sessionId));
  const shown = (): boolean => {
    if (!document.querySelector(selector)) return false;
    showInConversation(questionId);
    return true;
  };
  if (shown()) return;
  const observer = new MutationObserver(() => {
    if (shown()) stop();
  });
  const timer = window.setTimeout(() => stop(), GIVE_UP_MS);
  const stop = (): void => {
    observer.disconnect();
    window.clearTimeout(timer);
  };
  observer.observe(document.body, { childList: true, subtree: true });
}

const GIVE_UP_MS = 15_000;
