import { errorWords, personWords } from "../util/error-words.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { followInstall } from "../api/install-events.js";
import { api } from "../api/rest.js";
import type { AgentDetails, AuthMethod, CatalogueView } from "../api/types.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { agentLoginHref, navigate } from "./route.js";

/** The page's reads: loading, then what the host answered, or why it could not. */
type Loaded<T> =
  | { readonly name: "loading" }
  | { readonly name: "loaded"; readonly value: T }
  | { readonly name: "failed"; readonly message: string };

/** The install (or removal) this page runs: one at a time, its log kept on screen once it ends. */
type Work =
  | { readonly name: "idle" }
  | { readonly name: "running"; readonly agentId: string; readonly what: string; readonly lines: readonly string[] }
  | { readonly name: "done"; readonly agentId: string; readonly what: string; readonly lines: readonly string[] }
  | { readonly name: "failed"; readonly agentId: string; readonly what: string; readonly lines: readonly string[]; readonly reason: string };

const originWords: Record<AgentDetails["origin"], string> = { bundled: "bundled", config: "configuration", installed: "installed" };
const loginWords: Record<AgentDetails["login"], string> = { "logged-in": "Logged in", "needs-login": "Needs login", unknown: "Login unknown" };

/**
 * `#/agents`: the agents this host has (origin, version, login state, their auth methods with a *Log in* each),
 * the agent registry's entries with *Install* and *Upgrade*, *Remove* for installed ones, and the running
 * install's own log.
 */
export function AgentsPage({ onAgentsChanged }: { onAgentsChanged: () => void }) {
  const [agents, setAgents] = useState<Loaded<readonly AgentDetails[]>>({ name: "loading" });
  const [catalogue, setCatalogue] = useState<Loaded<CatalogueView>>({ name: "loading" });
  const [work, setWork] = useState<Work>({ name: "idle" });
  /** The installed agent whose removal waits to be confirmed. */
  const [removing, setRemoving] = useState<string | null>(null);
  // An install goes on on the host when the person leaves the page: it is followed to its end all the same, so the
  // rest of the dashboard (New session's agents) learns of it; only this page's own state is left alone.
  const shown = useRef(true);

  const reload = (): void => {
    api.agents().then(
      (list) => setAgents({ name: "loaded", value: list.details }),
      (error: unknown) => setAgents({ name: "failed", message: errorWords(error) }),
    );
    api.catalogue().then(
      (value) => setCatalogue({ name: "loaded", value }),
      (error: unknown) => setCatalogue({ name: "failed", message: errorWords(error) }),
    );
  };
  useEffect(() => {
    reload();
    return () => {
      shown.current = false;
    };
  }, []);
  const show = (next: Work): void => {
    if (shown.current) setWork(next);
  };

  const finished = (): void => {
    if (shown.current) reload();
    onAgentsChanged();
  };

  const install = async (agentId: string, mode: "add" | "upgrade"): Promise<void> => {
    const what = mode === "add" ? `Installing ${agentId}` : `Upgrading ${agentId}`;
    let lines: string[] = [];
    show({ name: "running", agentId, what, lines });
    try {
      const { id } = await api.startInstall({ id: agentId, mode });
      const end = await followInstall(id, (event) => {
        if (event.kind !== "progress") return;
        lines = [...lines, event.line];
        show({ name: "running", agentId, what, lines });
      });
      if (end.kind === "failed") show({ name: "failed", agentId, what, lines, reason: personWords(end.reason) });
      else show({ name: "done", agentId, what, lines });
    } catch (error) {
      show({ name: "failed", agentId, what, lines, reason: errorWords(error) });
    }
    finished();
  };

  const remove = async (agentId: string): Promise<void> => {
    const what = `Removing ${agentId}`;
    show({ name: "running", agentId, what, lines: [] });
    try {
      await api.removeAgent(agentId);
      show({ name: "done", agentId, what, lines: [] });
    } catch (error) {
      show({ name: "failed", agentId, what, lines: [], reason: errorWords(error) });
    }
    finished();
  };

  const busy = work.name === "running";
  const entries = catalogue.name === "loaded" ? catalogue.value.agents : [];
  return (
    <div class="agents-page">
      <section class="panel" aria-labelledby="agents-heading">
        <h2 id="agents-heading">Agents {agents.name === "loaded" ? <span class="count">{agents.value.length}</span> : null}</h2>
        {agents.name === "loading" ? <p class="empty">Loading the agents…</p> : null}
        {agents.name === "failed" ? (
          <p class="error-box" role="alert">
            The agents could not be read: {agents.message}
          </p>
        ) : null}
        {agents.name === "loaded" ? (
          <ul class="cards">
            {agents.value.map((agent) => {
              const entry = entries.find((e) => e.id === agent.id);
              const upgradable = agent.origin === "installed" && entry !== undefined && entry.version !== agent.version;
              return (
                <li class="card agent-card" key={agent.id} aria-label={`Agent ${agent.id}`}>
                  <div class="agent-head">
                    <strong>{agent.id}</strong>
                    <span class="badge info">{originWords[agent.origin]}</span>
                    {agent.version === null ? null : <span class="badge">version {agent.version}</span>}
                    <span class={`badge ${agent.login === "logged-in" ? "ok" : agent.login === "needs-login" ? "warn" : ""}`}>
                      {loginWords[agent.login]}
                    </span>
                  </div>
                  <AuthMethods agentId={agent.id} />
                  {agent.origin === "installed" ? (
                    <div class="agent-actions">
                      {upgradable ? (
                        <button type="button" disabled={busy} onClick={() => void install(agent.id, "upgrade")}>
                          Upgrade to {entry.version}
                        </button>
                      ) : null}
                      <button type="button" class="danger" disabled={busy} onClick={() => setRemoving(agent.id)}>
                        Remove
                      </button>
                    </div>
                  ) : null}
                </li>
              );
            })}
          </ul>
        ) : null}
      </section>
      <section class="panel" aria-labelledby="catalogue-heading">
        <h2 id="catalogue-heading">Install from catalogue</h2>
        {catalogue.name === "loading" ? <p class="empty">Reading the agent registry…</p> : null}
        {catalogue.name === "failed" ? (
          <p class="error-box" role="alert">
            The agent registry could not be read: {catalogue.message}
          </p>
        ) : null}
        {catalogue.name === "loaded" ? (
          <>
            <p class="muted">From {catalogue.value.registry}</p>
            <ul class="cards">
              {catalogue.value.agents.map((entry) => (
                <li class="card agent-card" key={entry.id} aria-label={`Registry agent ${entry.id}`}>
                  <div class="agent-head">
                    <strong>{entry.name}</strong>
                    <span class="badge">version {entry.version}</span>
                    <span class="muted">{entry.distributions.join(", ")}</span>
                  </div>
                  {entry.description === null ? null : <p class="muted">{entry.description}</p>}
                  <div class="agent-actions">
                    {entry.installed === null ? (
                      <button type="button" class="primary" disabled={busy} onClick={() => void install(entry.id, "add")}>
                        Install {entry.id}
                      </button>
                    ) : (
                      <span class="muted">Installed: version {entry.installed}</span>
                    )}
                  </div>
                </li>
              ))}
            </ul>
          </>
        ) : null}
        {work.name === "idle" ? null : <WorkLog work={work} />}
      </section>
      {removing === null ? null : (
        <ConfirmDialog
          title={`Remove ${removing}?`}
          body="It leaves the agents list: sessions that use it cannot start it again until it is installed again. Agents of it running now keep running until they stop; its files go at the host's next start."
          confirmLabel="Remove"
          workingLabel="Removing…"
          onConfirm={() => remove(removing)}
          onClose={() => setRemoving(null)}
        />
      )}
    </div>
  );
}

function WorkLog({ work }: { work: Exclude<Work, { name: "idle" }> }) {
  const status = work.name === "running" ? "…" : work.name === "done" ? ": done" : ": failed";
  return (
    <div class="install-log">
      <h3 class="subheading">
        {work.what}
        {status}
      </h3>
      {work.name === "failed" ? (
        <p class="error-box" role="alert">
          {work.reason}
        </p>
      ) : null}
      {work.lines.length === 0 ? null : (
        <pre role="log" aria-label="Install log">
          {work.lines.join("\n")}
        </pre>
      )}
    </div>
  );
}

/** The agent's auth methods (its own `initialize` answer), each with a *Log in* that opens its login view. */
function AuthMethods({ agentId }: { agentId: string }) {
  const [methods, setMethods] = useState<Loaded<readonly AuthMethod[]>>({ name: "loading" });
  useEffect(() => {
    api.agentLogins(agentId).then(
      (value) => setMethods({ name: "loaded", value: value.methods }),
      (error: unknown) => setMethods({ name: "failed", message: errorWords(error) }),
    );
  }, [agentId]);
  if (methods.name === "loading") return <p class="muted">Asking the agent how it logs in…</p>;
  if (methods.name === "failed") return <p class="muted">Its login methods could not be read: {methods.message}</p>;
  if (methods.value.length === 0) return <p class="muted">No login needed.</p>;
  return (
    <ul class="auth-methods">
      {methods.value.map((method) => (
        <li key={method.id}>
          <span title={method.description ?? undefined}>{method.name}</span>{" "}
          <button type="button" onClick={() => navigate(agentLoginHref(agentId, method.id))} aria-label={`Log in to ${agentId} with ${method.name}`}>
            Log in
          </button>
        </li>
      ))}
    </ul>
  );
}
