import type { Usage } from "@agentclientprotocol/sdk/unstable";

/** A deterministic stand-in for a model's token count: one token per 4 characters, rounded up. */
function tokensOf(characters: number): number {
  return Math.ceil(characters / 4);
}

/** Counts one turn's prompt and streamed agent text, for the `usage` of its `session/prompt` response. */
export class UsageMeter {
  private outputCharacters = 0;

  constructor(private readonly promptText: string) {}

  countOutput(text: string): void {
    this.outputCharacters += text.length;
  }

  usage(): Usage {
    const inputTokens = tokensOf(this.promptText.length);
    const outputTokens = tokensOf(this.outputCharacters);
    return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  }
}
