import type { SessionWorktree } from "../api/types.js";

/** A worktree session's branch and state, with Land and Discard while it is active. */
export function WorktreeBar({ worktree, onLand, onDiscard }: { worktree: SessionWorktree; onLand: () => void; onDiscard: () => void }) {
  return (
    <div class={`worktree-bar worktree-${worktree.state}`}>
      <p class="meta">
        Branch <span class="path">{worktree.branch}</span> from <span class="path">{worktree.base}</span>
        {" · "}
        <WorktreeState worktree={worktree} />
      </p>
      {worktree.state === "active" ? (
        <div class="actions">
          <button type="button" class="primary" onClick={onLand}>
            Land…
          </button>
          <button type="button" class="danger quiet" onClick={onDiscard}>
            Discard…
          </button>
        </div>
      ) : null}
    </div>
  );
}

function WorktreeState({ worktree }: { worktree: SessionWorktree }) {
  switch (worktree.state) {
    case "active":
      return <span class="badge info">not landed yet</span>;
    case "landed":
      return (
        <span class="badge ok" role="status">
          Landed into {worktree.base}
          {worktree.landedCommit ? ` as ${worktree.landedCommit.slice(0, 12)}` : ""}
        </span>
      );
    case "discarded":
      return (
        <span class="badge" role="status">
          Discarded: the branch and its worktree are gone
        </span>
      );
  }
}
