import { errorWords } from "../util/error-words.js";
import { useEffect, useState } from "preact/hooks";
import { api } from "../api/rest.js";
import type { AgentLogin, AgentLogins, AuthMethod } from "../api/types.js";
import { AgentLoginView } from "./AgentLoginView.js";
import { EnvVarLoginForm } from "./EnvVarLoginForm.js";
import { Modal } from "./Modal.js";
import { agentLoginHref, terminalLoginHref } from "./route.js";

type Methods = { readonly name: "loading" } | { readonly name: "failed"; readonly message: string } | ({ readonly name: "ready" } & AgentLogins);

/** `#/agents/<id>/login/<methodId>`: logging an agent in from this device, in the way its method's type needs. */
export function LoginRoute({ agentId, methodId, onClose }: { agentId: string; methodId: string; onClose: () => void }) {
  const [methods, setMethods] = useState<Methods>({ name: "loading" });
  useEffect(() => {
    let current = true;
    setMethods({ name: "loading" });
    api.agentLogins(agentId).then(
      (answer) => current && setMethods({ name: "ready", ...answer }),
      (error: unknown) => current && setMethods({ name: "failed", message: errorWords(error) }),
    );
    return () => {
      current = false;
    };
  }, [agentId]);
  const method = methods.name === "ready" ? methods.methods.find((candidate) => candidate.id === methodId) : undefined;
  return (
    <Modal labelledBy="agent-login-title" onClose={onClose}>
      <h2 id="agent-login-title">
        Log in to {agentId}
        {method ? `: ${method.name}` : ""}
      </h2>
      {methods.name === "loading" ? <p class="muted">Asking the agent how it logs in…</p> : null}
      {methods.name === "failed" ? (
        <p class="error-box" role="alert">
          {methods.message}
        </p>
      ) : null}
      {methods.name === "ready" && method ? (
        <MethodView key={method.id} agentId={agentId} method={method} waiting={waitingLogin(methods.logins, method.id)} />
      ) : null}
      {methods.name === "ready" && !method ? <OtherMethods agentId={agentId} methodId={methodId} methods={methods.methods} /> : null}
      <div class="dialog-actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}

/** The latest login of the method waiting for its callback (started by this page before, another device, an ACP client). */
function waitingLogin(logins: readonly AgentLogin[], methodId: string): AgentLogin | undefined {
  return logins.filter((login) => login.methodId === methodId && login.state === "address_captured").at(-1);
}

/** The view for the method's type: "agent" (the agent's own login, often in a browser), "env_var" (values to hand over). */
function MethodView({ agentId, method, waiting }: { agentId: string; method: AuthMethod; waiting: AgentLogin | undefined }) {
  switch (method.type) {
    case "agent":
      return <AgentLoginView agentId={agentId} method={method} waiting={waiting} />;
    case "env_var":
      return <EnvVarLoginForm agentId={agentId} method={method} />;
    case "terminal":
      return (
        <p>
          This login runs in a terminal on the host. <a href={terminalLoginHref(agentId, method.id)}>Open its terminal here</a>, or run{" "}
          <code>
            berth login --agent {agentId} --method {method.id}
          </code>{" "}
          in a terminal.
        </p>
      );
    default:
      return (
        <p class="muted">
          This agent's “{method.name}” login ({method.type}) cannot be done from this page.
        </p>
      );
  }
}

function OtherMethods({ agentId, methodId, methods }: { agentId: string; methodId: string; methods: readonly AuthMethod[] }) {
  return (
    <>
      <p class="error-box" role="alert">
        {agentId} has no login “{methodId}”.
      </p>
      {methods.length > 0 ? (
        <ul>
          {methods.map((method) => (
            <li key={method.id}>
              <a href={agentLoginHref(agentId, method.id)}>{method.name}</a>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
