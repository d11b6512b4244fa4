import { navigate, sessionHref } from "./route.js";

/**
 * Brings the open conversation's question into view and gives it the focus. The transcript shows only the
 * rows in view: a question not among them is at its end (an agent waits on it), so the end comes first, and
 * the focus waits until the row is rendered (a frame or more later, under load several).
 */
export function showInConversation(questionId: string): void {
  if (focusRow(questionId)) return;
  const transcript = document.querySelector(".transcript");
  if (transcript) transcript.scrollTop = transcript.scrollHeight;
  whenRendered(questionId);
}

/** Opens a question's session and, once its chat shows the question, brings it into view with the focus. */
export function openAtQuestion(sessionId: string, questionId: string): void {
  navigate(sessionHref(sessionId));
  if (!focusRow(questionId)) whenRendered(questionId);
}

function focusRow(questionId: string): boolean {
  const row = document.querySelector<HTMLElement>(`.transcript [data-question-id="${CSS.escape(questionId)}"]`);
  if (!row) return false;
  row.scrollIntoView({ block: "nearest" });
  row.focus();
  return true;
}

/** The one wait for a question's row to focus, if any: a newer wait replaces it. */
let waiting: (() => void) | undefined;

/**
 * Focuses the row once it is in the page. The wait ends there, or with a newer one, the person's next key or pointer
 * press (they are doing something else: typing in the composer, say), another route, or after a while (the question
 * may be answered elsewhere meanwhile).
 */
function whenRendered(questionId: string): void {
  waiting?.();
  const route = window.location.hash;
  const observer = new MutationObserver(() => {
    if (focusRow(questionId)) stop();
  });
  const timer = window.setTimeout(() => stop(), GIVE_UP_MS);
  const routeChanged = (): void => {
    if (window.location.hash !== route) stop();
  };
  // From the next task on: the key or tap that asked for the question is still being dispatched.
  const listening = window.setTimeout(() => {
    document.addEventListener("keydown", stop, true);
    document.addEventListener("pointerdown", stop, true);
  });
  const stop = (): void => {
    observer.disconnect();
    window.clearTimeout(timer);
    window.clearTimeout(listening);
    document.removeEventListener("keydown", stop, true);
    document.removeEventListener("pointerdown", stop, true);
    window.removeEventListener("hashchange", routeChanged);
    if (waiting === stop) waiting = undefined;
  };
  waiting = stop;
  window.addEventListener("hashchange", routeChanged);
  observer.observe(document.body, { childList: true, subtree: true });
}

const GIVE_UP_MS = 15_000;
