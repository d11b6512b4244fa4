import { readFileSync, writeFileSync } from "node:fs";
import type { AuthenticateRequest } from "@agentclientprotocol/sdk";

/**
 * The `authenticate` each agent accepted, replayed to every later child of that agent so a
 * session outlives the release of its process. Credentials in it (a token in `_meta`) never
 * reach the journal, the logs or the API: in memory only, or in a 0600 file when configured.
 */
export class AgentLogins {
  private readonly logins: Map<string, AuthenticateRequest>;

  /** `file`: where logins survive a restart; undefined keeps them in memory only. */
  constructor(private readonly file: string | undefined) {
    this.logins = new Map(file ? Object.entries(readLogins(file)) : []);
  }

  get(agentId: string): AuthenticateRequest | undefined {
    return this.logins.get(agentId);
  }

  remember(agentId: string, request: AuthenticateRequest): void {
    this.logins.set(agentId, request);
    if (this.file) writeFileSync(this.file, JSON.stringify(Object.fromEntries(this.logins)), { mode: 0o600 });
  }
}

function readLogins(file: string): Record<string, AuthenticateRequest> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return {};
  }
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`${file} does not hold agent logins (expected a JSON object)`);
  return parsed as Record<string, AuthenticateRequest>;
}
