/**
 * Berth's own markup in a message, added to HTML already sanitized (so none of it comes from the
 * agent): each code block gets a bar with its language and a copy button, and each task-list item
 * its box, a checkbox that cannot be changed (the agent's list is a report, not a form).
 */
export function withBerthMarkup(sanitized: string, taskMark: string): string {
  const template = document.createElement("template");
  template.innerHTML = sanitized;
  const root = template.content;
  for (const pre of root.querySelectorAll("pre")) withCodeBar(pre);
  for (const mark of root.querySelectorAll("span[data-task]")) {
    const state = mark.getAttribute("data-task") ?? "";
    // The agent's own `data-task` spans (raw HTML) lack the page's mark: left as they are, boxless.
    if (!state.startsWith(taskMark)) continue;
    mark.closest("li")?.classList.add("task");
    mark.replaceWith(taskBox(state === `${taskMark}done`));
  }
  return template.innerHTML;
}

function withCodeBar(pre: HTMLPreElement): void {
  const block = document.createElement("div");
  block.className = "code-block";
  const bar = document.createElement("div");
  bar.className = "code-bar";
  const language = pre.getAttribute("data-lang");
  if (language) {
    const label = document.createElement("span");
    label.className = "code-lang";
    label.textContent = language;
    bar.append(label);
  }
  const copy = document.createElement("button");
  copy.type = "button";
  copy.className = "code-copy";
  copy.textContent = "Copy";
  copy.setAttribute("aria-label", language ? `Copy the ${language} code` : "Copy the code");
  bar.append(copy);
  pre.replaceWith(block);
  block.append(bar, pre);
}

function taskBox(done: boolean): HTMLInputElement {
  const box = document.createElement("input");
  box.type = "checkbox";
  box.className = "task-box";
  box.disabled = true;
  box.checked = done;
  // `checked` as an attribute too: the HTML is serialized, and the property alone would not survive.
  if (done) box.setAttribute("checked", "");
  box.setAttribute("aria-label", done ? "done" : "not done");
  return box;
}
