import { errorWords } from "../util/error-words.js";
import { useState } from "preact/hooks";
import { api } from "../api/rest.js";
import type { AgentLogin, AuthMethod } from "../api/types.js";
import { LoginOutcome } from "./AgentLoginView.js";

type Step =
  | { readonly name: "editing"; readonly refused?: string }
  | { readonly name: "sending" }
  | { readonly name: "ended"; readonly login: AgentLogin };

/**
 * An environment-variable login: one password field per variable, handed to Berth, which starts the
 * agent with them set (and every later process of it). The values are cleared from the page as they
 * are sent and never shown again.
 */
export function EnvVarLoginForm({ agentId, method }: { agentId: string; method: AuthMethod }) {
  const vars = method.vars ?? [];
  const empty = () => Object.fromEntries(vars.map((name) => [name, ""]));
  const [values, setValues] = useState<Record<string, string>>(empty);
  const [step, setStep] = useState<Step>({ name: "editing" });

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const env = values;
    setValues(empty());
    setStep({ name: "sending" });
    try {
      const login = await api.startAgentLogin(agentId, method.id, env);
      setStep(login.state === "failed" ? { name: "editing", refused: `The login failed: ${login.error}` } : { name: "ended", login });
    } catch (error) {
      setStep({ name: "editing", refused: errorWords(error) });
    }
  };

  if (step.name === "ended") return <LoginOutcome login={step.login} />;
  return (
    <form class="env-login" onSubmit={(event) => void submit(event)}>
      {method.description ? <p class="muted">{method.description}</p> : null}
      {vars.map((name) => (
        <div class="field" key={name}>
          <label for={`env-login-${name}`}>{name}</label>
          <input
            id={`env-login-${name}`}
            type="password"
            required
            autocomplete="off"
            value={values[name]}
            onInput={(event) => setValues({ ...values, [name]: event.currentTarget.value })}
          />
        </div>
      ))}
      {step.name === "editing" && step.refused ? (
        <p class="error-box" role="alert">
          {step.refused}
        </p>
      ) : null}
      <button type="submit" class="primary" disabled={step.name === "sending"}>
        {step.name === "sending" ? "Logging in…" : "Log in"}
      </button>
    </form>
  );
}
