// Why another host's session is not run here (src/host/owned-elsewhere.ts): the refusal a request path gets looks at no
// file (a network filesystem may hang); adoption looks at the session's directory itself, asynchronously.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { PeerSession } from "../../src/host/fleet-directory.js";
import { directoryRefusal, refusalFor } from "../../src/host/owned-elsewhere.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function peerAt(cwd: string, ownerOnline = false): PeerSession {
  return {
    session: {
      id: "s-1",
      agent: "demo",
      cwd,
      workspace: null,
      title: null,
      agentSessionId: null,
      agentRequest: null,
      agentState: null,
      worktree: null,
      createdAt: 1,
      updatedAt: 1,
    },
    owner: { id: "host-a", url: "http://127.0.0.1:7420" },
    ownerOnline,
    pendingQuestions: [],
  };
}

describe("why another host's session is not run here", () => {
  it("a request path's refusal looks at no file: an offline owner's session is adoptable where its directory exists", () => {
    const refusal = refusalFor(peerAt("/no/such/directory/anywhere"), true);
    expect(refusal.why).toBe("owner_offline");
    expect(refusal.message).toContain("on a host where its directory exists");
    expect(refusal.message).not.toContain("/no/such/directory/anywhere");
    expect(refusalFor(peerAt("/no/such/directory/anywhere"), false).why).toBe("adoption_off");
    expect(refusalFor(peerAt("/no/such/directory/anywhere", true), true).why).toBe("owner_online");
  });

  it("adoption finds the directory, or says it is not here (missing, or a file)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-owned-"));
    dirs.push(dir);
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect(await directoryRefusal(peerAt(dir))).toBeUndefined();
    for (const path of [join(dir, "gone"), file]) {
      const refusal = await directoryRefusal(peerAt(path));
      expect(refusal?.why).toBe("directory_missing");
      expect(refusal?.message).toContain(`its directory ${path} does not exist here`);
    }
  });
});
