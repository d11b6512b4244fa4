/**
 * Agent- or user-provided text (a title, a question, an error) as it goes into a webhook's `text`,
 * which Slack and Mattermost show as a message with markup of their own. Slack's control sequences
 * (`<url|text>` links, `<!channel>`, `<@user>`) are escaped as Slack documents (`&amp;`, `&lt;`,
 * `&gt;`; Mattermost reads them the same way). Mattermost formats `text` as Markdown too, where
 * `@channel`, `@all` and `@name` notify people and `[text](url)` is a link: an invisible word joiner
 * after each `@` and between `]` and `(` leaves the words as they read and disarms both. Line
 * breaks become spaces: the text is one line, so no Markdown block (a heading, a link definition)
 * can start in it.
 */
const WORD_JOINER = "\u2060";

export function webhookText(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@/g, `@${WORD_JOINER}`)
    .replace(/\]\(/g, `]${WORD_JOINER}(`);
}
