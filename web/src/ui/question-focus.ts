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
