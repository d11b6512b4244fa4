// Routing when a host goes away (docs/fleet.md, "Routing"): real `berth serve --store postgres://…` processes on one
// throwaway cluster, sharing one cluster secret. A client of B that used A's session through B keeps its connection
// when A dies and B adopts the session: its next prompt is answered by B, never sent on to the dead A. B dying
// (SIGKILL) with a client's hold on A releases that hold; so does the link between B and A going silent (A's pings).
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
let link: SilencingLink | undefined;
afterEach(async () => {
  await link?.close();
  link = undefined;
  await bed.cleanup();
});

const SECRET = "relay-test-secret-0123456789abcdef";

interface View {
  host: string | null;
  hostOnline: boolean;
  holders: number;
}

type Host = Awaited<ReturnType<FleetTestBed["serve"]>>;

/**
 * Hosts A and B (adopting offline hosts' sessions, their demo agents' conversations in one shared directory; B reaching
 * A through `link` if given), a session created on A, and a client of B that resumed it through B: A holds it for that client.
 */
async function clientOfBOnA(link?: SilencingLink) {
  const storeUrl = await postgres.freshDatabase();
  const workDir = bed.tempDir("berth-failover-work-");
  const shared = bed.tempDir("berth-failover-shared-");
  // Without a url, a host registers the address it listens on; A reached through `link` registers the link's.
  const startHost = async (id: string, url?: string) => {
    const config = {
      fleet: { heartbeatInterval: "250ms", hostTtl: "2000ms", ...(url ? { url } : {}), adopt: true, secret: SECRET },
      agents: { demo: { command: process.execPath, args: [demoAgentMain, "--state-dir", join(shared, "conversations")] } },
    };
    return bed.serve(storeUrl, id, bed.tempDir(`berth-failover-${id}-`), config);
  };
  const a = await startHost("host-a", link?.url);
  if (link) link.targetPort = Number(new URL(a.url).port);
  const b = await startHost("host-b");
  const onA = new AcpClient(a.acpUrl, a.token);
  await onA.initialize();
  const sessionId = await onA.newSession(workDir);
  onA.close();
  await eventually(async () => (await viewOn(a, sessionId)).holders === 0, "A's client left");
  await eventually(async () => (await getJson(b.url, b.token, `/api/sessions/${sessionId}`)).status === 200, "B lists A's session");
  const onB = new AcpClient(b.acpUrl, b.token);
  await onB.initialize();
  await onB.resume(sessionId, workDir);
  expect((await viewOn(a, sessionId)).holders).toBe(1);
  return { a, b, sessionId, workDir, onB };
}

/**
 * A TCP link to a loopback port that can go silent: from then on nothing passes either way and neither end hears of
 * the other closing (a partition, a cable pulled), until it is healed.
 */
class SilencingLink {
  silent = false;
  private readonly pairs: Array<{ near: Socket; far: Socket }> = [];
  private readonly server: Server;

  /** Where the link leads: set once the far host listens (before anyone connects through the link). */
  targetPort = 0;

  private constructor() {
    this.server = createServer((near) => {
      const far = connect(this.targetPort, "127.0.0.1");
      this.pairs.push({ near, far });
      const pass = (from: Socket, to: Socket) => {
        from.on("data", (data) => this.silent || to.write(data));
        from.on("close", () => this.silent || to.destroy());
        from.on("error", () => undefined);
      };
      pass(near, far);
      pass(far, near);
    });
  }

  static async open(): Promise<SilencingLink> {
    const link = new SilencingLink();
    await new Promise<void>((resolve) => link.server.listen(0, "127.0.0.1", resolve));
    return link;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  /** Cuts the near ends (the connecting side gave up); the far ends, silent, hear nothing of it. */
  dropNearEnds(): void {
    for (const { near } of this.pairs) near.destroy();
  }

  async close(): Promise<void> {
    for (const { near, far } of this.pairs.splice(0)) {
      near.destroy();
      far.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function viewOn(host: Host, sessionId: string): Promise<View> {
  return (await getJson<View>(host.url, host.token, `/api/sessions/${sessionId}`)).body;
}

describe("routing when a host of the fleet goes away", () => {
  it("answers on B, on the same connection, a session B adopted after relaying it to A", async () => {
    const { a, b, sessionId, workDir, onB } = await clientOfBOnA();
    expect(await onB.prompt(sessionId, "relayed to A")).toMatchObject({ stopReason: "end_turn" });

    await bed.killHost(a);
    await eventually(async () => !(await viewOn(b, sessionId)).hostOnline, "B shows A offline");
    // The same connection opens it again: B adopts it, and answers every later request itself.
    await onB.agent.request(methods.agent.session.load, { sessionId, cwd: workDir, mcpServers: [] });
    expect((await viewOn(b, sessionId)).host).toBe("host-b");
    expect(await onB.prompt(sessionId, "after adoption")).toMatchObject({ stopReason: "end_turn" });
    onB.close();
    expect(errorLines(b.server)).toEqual([]);
  }, 90_000);

  it("releases the hold A keeps for a client of B when B dies (SIGKILL)", async () => {
    const { a, b, sessionId, onB } = await clientOfBOnA();
    await bed.killHost(b);
    await eventually(async () => (await viewOn(a, sessionId)).holders === 0, "A released the hold of B's client");
    onB.close();
    expect(errorLines(a.server)).toEqual([]);
  }, 90_000);

  it("releases the hold A keeps for a client of B when the link between B and A goes silent (A's pings)", async () => {
    // B reaches A only through the link: A registers the link's address as its URL.
    link = await SilencingLink.open();
    const { a, sessionId, workDir, onB } = await clientOfBOnA(link);
    link.silent = true;
    // B's pings go unanswered: B gives its client a clear error and drops its end, which A never hears of.
    const turn = await onB.prompt(sessionId, "anyone there?").then(
      () => undefined,
      (error: { data?: unknown }) => error.data,
    );
    expect(turn).toMatchObject({ code: "owner_host_unreachable", host: "host-a" });
    link.dropNearEnds();
    await eventually(async () => (await viewOn(a, sessionId)).holders === 0, "A released the hold of B's silent connection", 30_000);

    // The link heals and the client opens the session again: one hold for one client.
    link.silent = false;
    await onB.resume(sessionId, workDir);
    expect((await viewOn(a, sessionId)).holders).toBe(1);
    onB.close();
    await eventually(async () => (await viewOn(a, sessionId)).holders === 0, "A released the client's hold when it left");
  }, 120_000);
});
