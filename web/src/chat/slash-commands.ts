/** A command the agent offers (ACP's `available_commands_update`), typed in the prompt as `/name …`. */
export interface SlashCommand {
  readonly name: string;
  readonly description: string;
  /** What to type after the name, when the command takes input. */
  readonly hint: string | null;
}

/** The agent's commands from its `availableCommands` (an update's, or as Berth keeps them); malformed entries are left out. */
export function commandsOf(value: unknown): SlashCommand[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry): SlashCommand[] => {
    if (typeof entry !== "object" || entry === null) return [];
    const { name, description, input } = entry as { name?: unknown; description?: unknown; input?: unknown };
    if (typeof name !== "string" || name === "") return [];
    const hint = typeof input === "object" && input !== null ? (input as { hint?: unknown }).hint : undefined;
    return [{ name, description: typeof description === "string" ? description : "", hint: typeof hint === "string" && hint !== "" ? hint : null }];
  });
}

/** The command name being typed: the whole text is `/` and a name not finished by a space yet; null otherwise. */
export function commandQuery(text: string): string | null {
  const match = /^\/([^\s/]*)$/.exec(text);
  return match ? match[1]!.toLowerCase() : null;
}

/** The commands whose name starts with what was typed, in the agent's order. */
export function matchingCommands(commands: readonly SlashCommand[], query: string): SlashCommand[] {
  return commands.filter((command) => command.name.toLowerCase().startsWith(query));
}

/** The prompt's text once a command is picked: its name and a space, for its input. */
export function withCommand(command: SlashCommand): string {
  return `/${command.name} `;
}
