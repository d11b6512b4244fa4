import { errorWords } from "../util/error-words.js";
import { useState } from "preact/hooks";
import { api } from "../api/rest.js";
import type { AgentLogin, AuthMethod } from "../api/types.js";
import { QuestionLink } from "./AgentLink.js";

type Step =
  | { readonly name: "ready" }
  | { readonly name: "starting" }
  | { readonly name: "open"; readonly login: AgentLogin; readonly refused?: string }
  | { readonly name: "delivering"; readonly login: AgentLogin }
  | { readonly name: "ended"; readonly login: AgentLogin }
  | { readonly name: "unreachable"; readonly message: string };

/**
 * An agent's own login ("agent" method): the agent opens the provider's page, Berth captures the
 * address for this device, and the address the browser ends on (`http://localhost:PORT/…`, which
 * cannot load here) is pasted back for Berth to hand to the agent's callback on the host.
 */
export function AgentLoginView({ agentId, method, waiting }: { agentId: string; method: AuthMethod; waiting?: AgentLogin }) {
  // A login already waiting for its callback (another device or an ACP client started it) is finished here.
  const [step, setStep] = useState<Step>(waiting ? { name: "open", login: waiting } : { name: "ready" });
  const [pasted, setPasted] = useState("");

  const start = async (): Promise<void> => {
    setStep({ name: "starting" });
    try {
      const login = await api.startAgentLogin(agentId, method.id);
      setStep(login.state === "address_captured" ? { name: "open", login } : { name: "ended", login });
    } catch (error) {
      setStep({ name: "unreachable", message: errorWords(error) });
    }
  };

  const deliver = async (login: AgentLogin): Promise<void> => {
    setStep({ name: "delivering", login });
    try {
      const after = await api.deliverLoginCallback(agentId, login.id, pasted);
      setStep(after.state === "logged_in" || after.state === "failed" ? { name: "ended", login: after } : { name: "open", login: after });
    } catch (error) {
      setStep({ name: "open", login, refused: errorWords(error) });
    }
  };

  return (
    <div class="agent-login">
      {method.description ? <p class="muted">{method.description}</p> : null}
      {step.name === "ready" || step.name === "starting" || step.name === "unreachable" ? (
        <>
          <p>The agent opens its login page; you open it here, on this device.</p>
          {step.name === "unreachable" ? (
            <p class="error-box" role="alert">
              {step.message}
            </p>
          ) : null}
          <button type="button" class="primary" disabled={step.name === "starting"} onClick={() => void start()}>
            {step.name === "starting" ? "Starting login…" : "Start login"}
          </button>
        </>
      ) : null}
      {step.name === "open" || step.name === "delivering" ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void deliver(step.login);
          }}
        >
          <p>1. Open the agent's login page and log in:</p>
          <QuestionLink idPrefix="agent-login" url={step.login.address!} />
          <p>
            2. Your browser then ends on an address on <code>localhost</code> that does not load here. Copy that address from the address bar:
          </p>
          <div class="field">
            <label for="agent-login-address">Paste the address your browser ended on</label>
            <input
              id="agent-login-address"
              type="url"
              required
              autocomplete="off"
              value={pasted}
              onInput={(event) => setPasted(event.currentTarget.value)}
            />
          </div>
          {step.name === "open" && step.refused ? (
            <p class="error-box" role="alert">
              {step.refused}
            </p>
          ) : null}
          <button type="submit" class="primary" disabled={step.name === "delivering" || pasted.trim() === ""}>
            {step.name === "delivering" ? "Finishing the login…" : "Finish the login"}
          </button>
        </form>
      ) : null}
      {step.name === "ended" ? <LoginOutcome login={step.login} /> : null}
    </div>
  );
}

/** How a login ended, as the agent answered it. */
export function LoginOutcome({ login }: { login: AgentLogin }) {
  if (login.state === "logged_in")
    return (
      <p class="login-outcome" role="status">
        Logged in. Berth gives this login to every new process of the agent.
      </p>
    );
  if (login.state === "failed")
    return (
      <p class="error-box login-outcome" role="alert">
        The login failed: {login.error}
      </p>
    );
  return (
    <p class="login-outcome" role="status">
      The agent got the address; it has not answered yet.
    </p>
  );
}
