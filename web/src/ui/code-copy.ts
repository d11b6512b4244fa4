/** How long a copy button says how its copy went. */
const TOLD_MS = 1_500;

/**
 * A click on a code block's copy button (message-markup.ts) copies its code, and the button says so
 * for a moment. Where the page may not write the clipboard (a plain-HTTP address other than
 * loopback), the code is selected for the person to copy. False when the click was not on one.
 */
export function copiedCode(event: MouseEvent): boolean {
  const button = (event.target as Element).closest(".code-block .code-copy");
  const pre = button?.closest(".code-block")?.querySelector("pre");
  if (!button || !pre) return false;
  // The renderer ends every block with a line break the agent did not write.
  const code = (pre.textContent ?? "").replace(/\n$/, "");
  if (navigator.clipboard) {
    navigator.clipboard.writeText(code).then(
      () => tell(button, "Copied"),
      () => tell(button, "Not copied"),
    );
  } else {
    window.getSelection()?.selectAllChildren(pre);
    tell(button, "Selected");
  }
  return true;
}

function tell(button: Element, what: string): void {
  button.textContent = what;
  setTimeout(() => {
    button.textContent = "Copy";
  }, TOLD_MS);
}
