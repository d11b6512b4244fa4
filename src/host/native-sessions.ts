import { z } from "zod";
import type { Store } from "../store/store.js";
import type { AgentsOutsideSessions, Asker } from "./agents-outside-sessions.js";
import type { Logger } from "./logger.js";

/** How long Berth waits for an agent's own `session/list`: a slow agent must not stall Berth's. */
const LIST_TIMEOUT_MS = 3_000;
/** The pages of the agent's list a `session/load` of an unknown id looks through for it. */
const FIND_PAGES = 10;

const listAnswer = z.object({
  sessions: z.array(
    z
      .object({
        sessionId: z.string().min(1),
        cwd: z.string().min(1),
        title: z.string().nullish(),
        updatedAt: z.string().nullish(),
        _meta: z.record(z.string(), z.unknown()).nullish(),
      })
      .loose(),
  ),
  nextCursor: z.string().nullish(),
});

/** A session the agent lists itself, as it listed it. */
export type NativeSession = z.infer<typeof listAnswer>["sessions"][number];
type ListAnswer = z.infer<typeof listAnswer>;

/** One page of the agent's own list; `nextCursor` asks the agent for the next. */
export interface NativePage {
  readonly sessions: NativeSession[];
  readonly nextCursor?: string;
}

/**
 * The agent's own sessions that Berth does not know — made outside Berth (directly with the agent, another
 * host): asked of the agent with its `session/list`, if it advertises it, and left out when it fails.
 */
export class NativeSessions {
  private readonly asking = new Map<string, Promise<ListAnswer | undefined>>();

  constructor(
    private readonly deps: {
      readonly outside: AgentsOutsideSessions;
      readonly store: Store;
      readonly log: Logger;
    },
  ) {}

  /**
   * A page of the agent's list less the sessions Berth has (by Berth's id or the agent's id it stores). Empty when the
   * agent cannot list, fails, answers something else, or takes longer than {@link LIST_TIMEOUT_MS} (logged).
   */
  async list(agentId: string, request: { readonly cwd?: string; readonly cursor?: string }, asker: Asker): Promise<NativePage> {
    let page: ListAnswer;
    try {
      const listed = await this.ask(agentId, request, asker);
      if (listed === undefined) return { sessions: [] };
      page = listed;
    } catch (error) {
      this.deps.log.warn(
        { agent: agentId, err: error, cwd: request.cwd },
        "the agent's own session/list failed; Berth lists its sessions without them",
      );
      return { sessions: [] };
    }
    const known = this.knownIds();
    return {
      sessions: page.sessions.filter((session) => !known.has(session.sessionId)),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  }

  /** The agent's own session `sessionId` in `cwd`, if it lists it (within its first {@link FIND_PAGES} pages). */
  async find(agentId: string, sessionId: string, cwd: string, asker: Asker): Promise<NativeSession | undefined> {
    let cursor: string | undefined;
    for (let page = 0; page < FIND_PAGES; page++) {
      const { sessions, nextCursor } = await this.list(agentId, { cwd, ...(cursor ? { cursor } : {}) }, asker);
      const found = sessions.find((session) => session.sessionId === sessionId);
      if (found || !nextCursor) return found;
      cursor = nextCursor;
    }
    return undefined;
  }

  /**
   * The agent's answer, checked; undefined if the agent does not advertise `sessionCapabilities.list`. Clients asking
   * the same page at once (loads of several of its sessions) share one question to the agent, bounded by the time only.
   */
  private ask(agentId: string, request: { readonly cwd?: string; readonly cursor?: string }, asker: Asker): Promise<ListAnswer | undefined> {
    const key = JSON.stringify([agentId, request.cwd ?? null, request.cursor ?? null]);
    const asked = this.asking.get(key);
    if (asked) return asked;
    const asking = this.askAgent(agentId, request, asker);
    this.asking.set(key, asking);
    const done = () => this.asking.delete(key);
    asking.then(done, done);
    return asking;
  }

  private async askAgent(agentId: string, request: { readonly cwd?: string; readonly cursor?: string }, asker: Asker) {
    const profile = await this.deps.outside.profile(agentId);
    if (profile.agentCapabilities?.sessionCapabilities?.list == null) return undefined;
    // Not the first asker's signal: the others share the question, and its time is bounded anyway.
    const timeout = AbortSignal.timeout(LIST_TIMEOUT_MS);
    let answer: unknown;
    try {
      answer = await this.deps.outside.listSessions(agentId, request, { ...asker, signal: timeout });
    } catch (error) {
      if (timeout.aborted) throw new Error(`the agent did not answer session/list within ${LIST_TIMEOUT_MS} ms`, { cause: error });
      throw error;
    }
    const parsed = listAnswer.safeParse(answer);
    if (!parsed.success) throw new Error(`the agent's session/list answer is not a list of sessions: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }

  private knownIds(): Set<string> {
    const known = new Set<string>();
    for (const session of this.deps.store.sessions.list()) {
      known.add(session.id);
      if (session.agentSessionId) known.add(session.agentSessionId);
    }
    return known;
  }
}
