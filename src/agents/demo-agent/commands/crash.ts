import type { Turn } from "../turn.js";

const crashExitCode = 3;

/** `/crash`: one chunk, then the process dies mid-turn without answering the prompt. */
export async function crash(turn: Turn): Promise<never> {
  await turn.say("Crashing now.");
  process.exit(crashExitCode);
}
