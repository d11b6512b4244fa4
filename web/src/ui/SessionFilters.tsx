import type { SessionView } from "../api/types.js";
import { activities, activityWords } from "./activity.js";
import { filterChoices, isFiltering, noFilter, type SessionFilter } from "./session-filter.js";
import { touchOrNarrow, useMediaQuery } from "./use-media-query.js";

/** Search by title and narrow by folder, agent, what the agent is doing and "waiting for me". */
export function SessionFilters({
  sessions,
  shown,
  filter,
  onChange,
}: {
  sessions: readonly SessionView[];
  shown: number;
  filter: SessionFilter;
  onChange: (filter: SessionFilter) => void;
}) {
  const { folders, agents } = filterChoices(sessions);
  const set = (change: Partial<SessionFilter>): void => onChange({ ...filter, ...change });
  const keyboardHints = !useMediaQuery(touchOrNarrow);
  return (
    <>
      <form class="filters" role="search" aria-label="Find sessions" onSubmit={(event) => event.preventDefault()}>
        <input
          id="session-search"
          type="search"
          class="search"
          aria-label="Search session titles"
          placeholder={keyboardHints ? "Search titles  ( / )" : "Search titles"}
          value={filter.text}
          onInput={(event) => set({ text: event.currentTarget.value })}
          onKeyDown={(event) => {
            // Escape clears the search, in every browser (not all do it for a search field themselves).
            if (event.key !== "Escape" || event.isComposing) return;
            event.preventDefault();
            set({ text: "" });
          }}
        />
        <select aria-label="Folder" value={filter.folder} onChange={(event) => set({ folder: event.currentTarget.value })}>
          <option value="">All folders</option>
          {folders.map((folder) => (
            <option key={folder} value={folder}>
              {folder}
            </option>
          ))}
        </select>
        <select aria-label="Agent" value={filter.agent} onChange={(event) => set({ agent: event.currentTarget.value })}>
          <option value="">All agents</option>
          {agents.map((agent) => (
            <option key={agent} value={agent}>
              {agent}
            </option>
          ))}
        </select>
        <select
          aria-label="State"
          value={filter.activity}
          onChange={(event) => set({ activity: event.currentTarget.value as SessionFilter["activity"] })}
        >
          <option value="">Any state</option>
          {activities.map((activity) => (
            <option key={activity} value={activity}>
              {activityWords[activity].plain}
            </option>
          ))}
        </select>
        <label class="check">
          <input type="checkbox" checked={filter.waiting} onChange={(event) => set({ waiting: event.currentTarget.checked })} />
          Waiting for me
        </label>
        {isFiltering(filter) ? (
          <button type="button" onClick={() => onChange(noFilter)}>
            Clear
          </button>
        ) : null}
      </form>
      {isFiltering(filter) ? (
        <p class="muted filter-count" role="status">
          {shown} of {sessions.length} sessions
        </p>
      ) : null}
    </>
  );
}
