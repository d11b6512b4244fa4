import { createInterface } from "node:readline";
import { callHost, HostClientError, type HostFlags } from "./host-client.js";

/** A login as the host answers it (`POST /api/agents/:id/logins`). */
interface AgentLogin {
  readonly id: string;
  readonly state: "starting" | "address_captured" | "callback_delivered" | "logged_in" | "failed";
  readonly address?: string;
  readonly error?: string;
}

export interface LoginIo {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
}

/**
 * `berth login --agent ID --method M` for a method the agent runs itself ("agent" type, often in a
 * browser): prints the address the agent opened, for any device, then reads the address that
 * browser ended on (`http://localhost:PORT/…`) and has the host hand it to the agent's callback. A
 * pasted address the host refuses is asked for again; a failed login is a {@link HostClientError}.
 */
export async function runAgentLogin(flags: HostFlags, agentId: string, methodId: string, io: LoginIo): Promise<void> {
  const path = `/api/agents/${encodeURIComponent(agentId)}/logins`;
  let login = await callHost<AgentLogin>(flags, path, { method: "POST", body: { methodId } });
  if (login.state === "address_captured") {
    io.output.write(`Open this address on any device and log in:\n\n  ${login.address}\n\n`);
    const lines = createInterface({ input: io.input, terminal: false })[Symbol.asyncIterator]();
    while (login.state === "address_captured") {
      io.output.write("Paste the address your browser ended on (it starts with http://localhost or http://127.0.0.1):\n");
      const line = await lines.next();
      if (line.done) throw new HostClientError("no address was pasted: the login is left to time out");
      if (line.value.trim() === "") continue;
      try {
        login = await callHost<AgentLogin>(flags, `${path}/${encodeURIComponent(login.id)}/callback`, {
          method: "POST",
          body: { address: line.value },
        });
      } catch (error) {
        if (!(error instanceof HostClientError)) throw error;
        io.output.write(`${error.message}\n`);
      }
    }
  }
  if (login.state === "callback_delivered") io.output.write("The agent got the address but has not answered yet.\n");
  if (login.state === "failed") throw new HostClientError(`the login failed: ${login.error}`);
  if (login.state === "logged_in") io.output.write(`Logged in to ${agentId}.\n`);
}
