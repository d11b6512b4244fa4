/**
 * What went wrong, in a person's words: the JSON-RPC wrapping ("Invalid params: …", "Internal error: …")
 * says which protocol rule was broken, not what happened, so it is dropped and the detail kept as it is.
 */
const protocolLabels = [
  "Parse error",
  "Invalid request",
  "Method not found",
  "Invalid params",
  "Internal error",
  "Resource not found",
  "Authentication required",
];

/** A label alone, with nothing after it: the agent or Berth said no more than that. */
const bareLabelWords: Readonly<Record<string, string>> = {
  "Parse error": "The message could not be read.",
  "Invalid request": "The request was refused.",
  "Method not found": "The agent does not support this.",
  "Invalid params": "The request was refused: something in it was not valid.",
  "Internal error": "Something went wrong, and the agent or Berth said no more about it.",
  "Resource not found": "It no longer exists.",
  "Authentication required": "The agent asks you to log in first.",
};

export function personWords(message: string): string {
  let text = message.trim();
  // A wrapped error may carry a label at each level ("Internal error: Invalid params: …").
  for (let label = leadingLabel(text); label !== null; label = leadingLabel(text)) {
    const rest = text.slice(label.length).replace(/^:\s*/, "").trim();
    if (rest === "") return bareLabelWords[label] ?? text;
    text = rest;
  }
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The words of anything thrown: an Error's message (with an ACP error's `data.message` detail), else its text. */
export function errorWords(error: unknown): string {
  if (!(error instanceof Error)) return personWords(String(error));
  const data = (error as { data?: unknown }).data;
  const detail = typeof data === "object" && data !== null && "message" in data ? String(data.message) : null;
  return personWords(detail && !error.message.includes(detail) ? `${error.message}: ${detail}` : error.message);
}

function leadingLabel(text: string): string | null {
  return protocolLabels.find((label) => text === label || text.startsWith(`${label}:`)) ?? null;
}
