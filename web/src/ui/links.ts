/** A web address (http or https), or undefined for anything else: `javascript:`, `data:`, `file:`, unparsable text. */
export function webAddress(url: string): URL | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : undefined;
  } catch {
    return undefined;
  }
}
