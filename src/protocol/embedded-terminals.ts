/**
 * What claude-agent-acp and codex-acp read from `clientCapabilities._meta` before they embed the terminal of a command
 * they ran themselves in its tool call: `terminal` content whose id the agent owns, and the terminal itself in the
 * updates' `_meta` (`terminal_info`, `terminal_output` with the output, `terminal_exit`).
 */
export const EMBEDDED_TERMINALS_META = "terminal_output";

/** A terminal an agent embedded: the tail of its output so far (`truncated` once older output was dropped) and, once it exited, how. */
export interface EmbeddedTerminal {
  readonly output: string;
  readonly truncated: boolean;
  readonly exit: { readonly exitCode: number | null; readonly signal: string | null } | null;
}

/**
 * How many exited terminals keep their output: a long session runs many commands, and each exited one is shown again
 * only while its tool call is still being updated, which the few latest cover. Older ones are kept without their
 * output (so that a late update naming one is still told the agent's own terminal), up to {@link EXITED_TERMINALS_NAMED}.
 */
export const EXITED_TERMINALS_KEPT = 8;
export const EXITED_TERMINALS_NAMED = 1_000;

/** The embedded terminals of one session's updates, read in their order (live, or replayed from the journal). */
export class EmbeddedTerminals {
  private readonly terminals = new Map<string, EmbeddedTerminal>();

  /** `outputLimit`: the bytes of each terminal's output kept, its tail (0 keeps only that the terminal exists). */
  constructor(private readonly outputLimit: number) {}

  /** Takes in what one update's `_meta` says of its terminal. */
  absorb(meta: Record<string, unknown> | null | undefined): void {
    if (!meta) return;
    const info = terminalIdOf(meta.terminal_info);
    if (info !== undefined && !this.terminals.has(info)) this.terminals.set(info, EMPTY);
    const output = meta.terminal_output as { data?: unknown } | undefined;
    const outputId = terminalIdOf(output);
    // Each `terminal_output` carries what the command wrote since the last one.
    if (outputId !== undefined && typeof output?.data === "string") {
      const known = this.get(outputId);
      const { text, cut } = tailWithin(known.output + output.data, this.outputLimit);
      this.terminals.set(outputId, { ...known, output: text, truncated: known.truncated || cut });
    }
    const exit = meta.terminal_exit as { exit_code?: unknown; signal?: unknown } | undefined;
    const exitId = terminalIdOf(exit);
    if (exitId !== undefined) {
      const exitCode = typeof exit?.exit_code === "number" ? exit.exit_code : null;
      const signal = typeof exit?.signal === "string" ? exit.signal : null;
      // Set again so that the map's order is the order of exits: the oldest exited are forgotten first.
      const known = this.get(exitId);
      this.terminals.delete(exitId);
      this.terminals.set(exitId, { ...known, exit: { exitCode, signal } });
      this.forgetOldExited();
    }
  }

  private forgetOldExited(): void {
    const exited = [...this.terminals].filter(([, terminal]) => terminal.exit !== null);
    const past = exited.length - EXITED_TERMINALS_KEPT;
    for (const [index, [terminalId, terminal]] of exited.entries()) {
      if (index >= past) break;
      if (index < exited.length - EXITED_TERMINALS_NAMED) this.terminals.delete(terminalId);
      else if (terminal.output !== "") this.terminals.set(terminalId, { output: "", truncated: true, exit: terminal.exit });
    }
  }

  /** The terminal the agent embedded under this id, if one was announced in the updates read so far. */
  find(terminalId: string): EmbeddedTerminal | undefined {
    return this.terminals.get(terminalId);
  }

  private get(terminalId: string): EmbeddedTerminal {
    return this.terminals.get(terminalId) ?? EMPTY;
  }
}

const EMPTY: EmbeddedTerminal = { output: "", truncated: false, exit: null };

/** The last `limit` bytes of `text`, from a whole character on, and whether anything was cut. */
function tailWithin(text: string, limit: number): { text: string; cut: boolean } {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short text needs no measuring.
  if (text.length * 3 <= limit) return { text, cut: false };
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limit) return { text, cut: false };
  let from = bytes.length - limit;
  // Continuation bytes (10xxxxxx) at the cut: the rest of a character whose start was dropped.
  while (from < bytes.length && (bytes[from]! & 0xc0) === 0x80) from++;
  return { text: bytes.toString("utf8", from), cut: true };
}

function terminalIdOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const id = (value as { terminal_id?: unknown }).terminal_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}
