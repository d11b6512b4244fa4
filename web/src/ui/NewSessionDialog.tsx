import { titleBranch } from "../../../src/protocol/branch-naming.js";
import { errorWords } from "../util/error-words.js";
import { useState } from "preact/hooks";
import type { AgentsList } from "../api/types.js";
import type { NewSessionParams } from "../chat/chat-session.js";
import { Modal } from "./Modal.js";

/** Where the session works: the directory as it is, or a new git worktree of its repository. */
type Place = "directory" | "worktree";

type Starting = { readonly name: "editing" } | { readonly name: "starting" } | { readonly name: "failed"; readonly message: string };

const LAST_DIRECTORY_KEY = "berth.lastDirectory";

/** Starts a session: an agent and the absolute directory it works in, or a new worktree of its repository (plus an optional title and workspace). */
export function NewSessionDialog({
  agents,
  onStart,
  onClose,
}: {
  agents: AgentsList | null;
  onStart: (params: NewSessionParams) => Promise<void>;
  onClose: () => void;
}) {
  // The person's choice, else the host's default: the list may arrive after the dialog opened.
  const [chosenAgent, setAgent] = useState("");
  const agent = chosenAgent || (agents?.default ?? "");
  const [cwd, setCwd] = useState(() => window.localStorage.getItem(LAST_DIRECTORY_KEY) ?? "");
  const [workspace, setWorkspace] = useState("");
  const [sandbox, setSandbox] = useState<NewSessionParams["sandbox"]>("configured");
  const [title, setTitle] = useState("");
  const [place, setPlace] = useState<Place>("directory");
  const [base, setBase] = useState("");
  const [branch, setBranch] = useState("");
  const [state, setState] = useState<Starting>({ name: "editing" });

  const submit = (event: Event): void => {
    event.preventDefault();
    const directory = cwd.trim();
    if (!directory.startsWith("/")) {
      setState({ name: "failed", message: `The directory must be an absolute path (starting with /), not “${directory}”.` });
      return;
    }
    setState({ name: "starting" });
    window.localStorage.setItem(LAST_DIRECTORY_KEY, directory);
    const worktree =
      place === "worktree" ? { ...(base.trim() ? { base: base.trim() } : {}), ...(branch.trim() ? { branch: branch.trim() } : {}) } : null;
    onStart({ agent, cwd: directory, workspace: workspace.trim() || null, sandbox, title: title.trim() || null, worktree }).then(
      onClose,
      (error: unknown) => setState({ name: "failed", message: errorWords(error) }),
    );
  };

  return (
    <Modal labelledBy="new-session-title" busy={state.name === "starting"} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <h2 id="new-session-title">New session</h2>
        <div class="field">
          <label for="new-agent">Agent</label>
          <select id="new-agent" value={agent} onChange={(e) => setAgent(e.currentTarget.value)} required>
            {(agents?.agents ?? []).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <TextField id="new-title" label="Title (optional)" words value={title} onInput={setTitle} />
        <TextField
          id="new-cwd"
          label="Directory"
          required
          placeholder="/home/you/project"
          hint={
            place === "worktree"
              ? "An absolute path in a git checkout on the machine Berth runs on."
              : "An absolute path on the machine Berth runs on."
          }
          value={cwd}
          onInput={setCwd}
        />
        <div class="field check">
          <input
            id="new-worktree"
            type="checkbox"
            aria-describedby="new-worktree-hint"
            checked={place === "worktree"}
            onChange={(e) => setPlace(e.currentTarget.checked ? "worktree" : "directory")}
          />
          <label for="new-worktree">In a new worktree</label>
          <small id="new-worktree-hint">
            The agent works on a branch of its own in a copy of the repository; you land or discard it after review.
          </small>
        </div>
        {place === "worktree" ? <WorktreeFields title={title} base={base} branch={branch} onBase={setBase} onBranch={setBranch} /> : null}
        <TextField
          id="new-workspace"
          label="Workspace (optional)"
          hint="Sessions in one directory and workspace share its services."
          value={workspace}
          onInput={setWorkspace}
        />
        <div class="field">
          <label class="check">
            <input
              id="new-sandbox"
              type="checkbox"
              aria-describedby="new-sandbox-hint"
              checked={sandbox === "workspace-write"}
              onChange={(e) => setSandbox(e.currentTarget.checked ? "workspace-write" : "configured")}
            />{" "}
            Sandbox
          </label>
          <small id="new-sandbox-hint">The agent and its commands write only in this directory and cannot see your keys.</small>
        </div>
        {state.name === "failed" ? (
          <p class="error" role="alert">
            {state.message}
          </p>
        ) : null}
        <div class="dialog-actions">
          <button type="button" disabled={state.name === "starting"} onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={state.name === "starting" || agent === ""}>
            {state.name === "starting" ? "Starting…" : "Start session"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The base and branch of a new worktree, both optional: the branch's default is shown as the title will make it. */
function WorktreeFields({
  title,
  base,
  branch,
  onBase,
  onBranch,
}: {
  title: string;
  base: string;
  branch: string;
  onBase: (base: string) => void;
  onBranch: (branch: string) => void;
}) {
  const fromTitle = titleBranch(title);
  const defaultBranch = fromTitle ?? "berth/ and the session's short id";
  return (
    <>
      <TextField
        id="new-base"
        label="Base branch (optional)"
        hint="Default: the branch the checkout is on. Landing merges into it."
        value={base}
        onInput={onBase}
      />
      <TextField
        id="new-branch"
        label="New branch (optional)"
        placeholder={fromTitle ?? undefined}
        hint={`Default: ${defaultBranch}.`}
        value={branch}
        onInput={onBranch}
      />
    </>
  );
}

/** A labelled text field with its hint under it; a path or a name, so not spell-checked unless it takes `words`. */
function TextField({
  id,
  label,
  hint,
  words = false,
  required = false,
  placeholder,
  value,
  onInput,
}: {
  id: string;
  label: string;
  hint?: string;
  words?: boolean;
  required?: boolean;
  placeholder?: string | undefined;
  value: string;
  onInput: (value: string) => void;
}) {
  const hintId = hint === undefined ? undefined : `${id}-hint`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="text"
        required={required}
        spellcheck={words ? undefined : false}
        autocomplete="off"
        placeholder={placeholder}
        aria-describedby={hintId}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      {hint === undefined ? null : <small id={hintId}>{hint}</small>}
    </div>
  );
}
