import { useEffect, useRef, useState } from "preact/hooks";
import { retriableImport } from "../chunk-import.js";
import type { LoginTerminalState } from "./login-terminal.js";

const importTerminal = retriableImport(() => import("./login-terminal.js"));

/** What the panel says of the login under its title. */
function statusOf(state: LoginTerminalState): string {
  switch (state.name) {
    case "connecting":
      return "Starting the login on the host…";
    case "running":
      return "Running on the host: what you type goes to the agent's login.";
    case "ended":
      if (state.signal) return `The login ended: stopped by ${state.signal}.`;
      return state.exitCode === 0 ? "The login ended successfully (exit status 0)." : `The login failed (exit status ${String(state.exitCode)}).`;
    case "failed":
      return `The login could not go on: ${state.reason}.`;
  }
}

/** An agent's terminal login (`#/agents/<id>/login/<method>`): the host's pseudo-terminal, in xterm.js, until the login ends. */
export function LoginPanel({ agentId, methodId, onClose }: { agentId: string; methodId: string; onClose: () => void }) {
  const screen = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<LoginTerminalState>({ name: "connecting" });
  useEffect(() => {
    let stopped = false;
    let opened: { dispose(): void } | undefined;
    setState({ name: "connecting" });
    importTerminal().then(
      ({ openLoginTerminal }) => {
        if (!stopped) opened = openLoginTerminal(screen.current!, agentId, methodId, setState);
      },
      () =>
        !stopped &&
        setState({ name: "failed", reason: "the terminal could not be loaded (Berth out of reach, or upgraded since this page was opened)" }),
    );
    return () => {
      stopped = true;
      opened?.dispose();
    };
  }, [agentId, methodId]);
  const over = state.name === "ended" || state.name === "failed";
  return (
    <section class="chat sheet panel login-panel" aria-labelledby="login-title">
      <header class="chat-head sheet-head">
        <div class="chat-title">
          <h2 id="login-title">Log in to {agentId}</h2>
          <p class="meta">
            method {methodId} ·{" "}
            <span role="status" class={over && !(state.name === "ended" && state.exitCode === 0) ? "login-status login-failed" : "login-status"}>
              {statusOf(state)}
            </span>
          </p>
        </div>
        <div class="actions">
          <button
            type="button"
            onClick={onClose}
            title={over ? "Back to the overview" : "Leave the login; it is stopped if no one comes back within a minute"}
          >
            Close
          </button>
        </div>
      </header>
      <div class="login-screen" ref={screen} role="group" aria-label={`Terminal of ${agentId}'s login`} />
    </section>
  );
}
