import type { HostRecord, LocationView, StampedRecord } from "../api/types.js";
import { locationName } from "../util/format.js";
import { Ago, Countdown } from "./Countdown.js";
import { locationStateWords, words } from "./plain-words.js";
import { StateBadge } from "./StateBadge.js";
import { Term } from "./Term.js";

type Eviction = StampedRecord & { readonly record: Extract<HostRecord, { kind: "location_evicted" }> };

const EVICTIONS_SHOWN = 10;
const stateTones: Record<string, "ok" | "warn" | "danger"> = { retained: "ok", interrupting: "danger", evicting: "warn" };

/** Cached locations: why each is kept, until when, its services, and what was evicted before. */
export function LocationsPanel({ locations, records }: { locations: readonly LocationView[]; records: readonly StampedRecord[] }) {
  const evictions = records.filter((r): r is Eviction => r.record.kind === "location_evicted").reverse();
  return (
    <section class="panel" aria-labelledby="locations-heading">
      <h2 id="locations-heading">
        Locations <span class="count">{locations.length}</span>
      </h2>
      {locations.length === 0 ? (
        <p class="empty">No location is loaded. Locations boot when a session needs them and are evicted when idle.</p>
      ) : (
        <ul class="cards">
          {locations.map((location) => (
            <LocationCard
              key={`${location.host ?? ""}\u0000${location.directory}\u0000${location.workspace ?? ""}`}
              location={location}
              evictions={evictions.filter((e) => sameLocation(e.record, location))}
            />
          ))}
        </ul>
      )}
      <h3 class="subheading">Eviction history</h3>
      {evictions.length === 0 ? (
        <p class="empty">No location was evicted recently.</p>
      ) : (
        <ul class="history">
          {evictions.slice(0, EVICTIONS_SHOWN).map((e) => (
            <li key={e.id}>
              <span class="path">{locationName(e.record.directory, e.record.workspace)}</span>{" "}
              <span class={`badge ${e.record.reason === "idle" ? "muted" : "danger"}`}>{e.record.reason}</span> <Ago at={e.at} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function LocationCard({ location, evictions }: { location: LocationView; evictions: readonly Eviction[] }) {
  const active = location.keptBy === "active-execution";
  return (
    <li class="card location">
      <div class="card-head">
        <h3 class="path">{location.directory}</h3>
        <StateBadge
          state={locationStateWords[location.state]?.plain ?? location.state}
          term={locationStateWords[location.state]?.term}
          tone={stateTones[location.state] ?? "muted"}
        />
      </div>
      {location.workspace ? <p class="meta">workspace {location.workspace}</p> : null}
      <dl class="facts">
        {location.host !== null ? (
          <>
            <dt>Host</dt>
            <dd class="mono">{location.host}</dd>
          </>
        ) : null}
        <dt>Kept by</dt>
        <dd>
          {active ? (
            <span class="running term" title={words.activeExecution.term}>
              {location.activeSessions.length === 1 ? words.activeExecution.plain : `${location.activeSessions.length} turns are running`}
            </span>
          ) : (
            <Term words={words.idleTtl} />
          )}
        </dd>
        <dt class="term" title={words.idleDeadline.term}>
          {words.idleDeadline.plain}
        </dt>
        <dd>
          <Countdown at={location.expiresAt} expired="due now" />
          {active ? <span class="muted"> · extended while work runs</span> : null}
        </dd>
        <dt class="term" title={words.cap.term}>
          {words.cap.plain}
        </dt>
        <dd>
          <Countdown at={location.capAt} expired="due now" />
          <span class="muted"> · then silent work is interrupted</span>
        </dd>
        <dt>Sessions</dt>
        <dd>{location.sessions.length}</dd>
        <dt>Services</dt>
        <dd>
          {location.services.length === 0 ? (
            "none started"
          ) : (
            <ul class="services">
              {location.services.map((service) => (
                <li key={service.name}>
                  {service.name} <span class="badge muted">{service.state}</span>
                  {service.pid !== null ? <span class="mono"> pid {service.pid}</span> : null}
                  {service.port !== null ? <span class="mono"> :{service.port}</span> : null}
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Terminals</dt>
        <dd>{location.terminals}</dd>
        {location.pendingQuestions > 0 ? (
          <>
            <dt>Questions</dt>
            <dd class="attention">{location.pendingQuestions} waiting</dd>
          </>
        ) : null}
        {evictions.length > 0 ? (
          <>
            <dt>Evicted before</dt>
            <dd>
              {evictions.length}× (last {evictions[0]!.record.reason}, <Ago at={evictions[0]!.at} />)
            </dd>
          </>
        ) : null}
      </dl>
    </li>
  );
}

function sameLocation(record: { directory: string; workspace: string | undefined }, location: LocationView): boolean {
  return record.directory === location.directory && (record.workspace ?? null) === location.workspace;
}
