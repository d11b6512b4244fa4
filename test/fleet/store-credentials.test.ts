// A fleet's credentials kept from other local users: no store password on the command line (`ps` shows it to
// everyone), PGPASSWORD and the passfile instead, and a warning for a configuration file others can read.
// A real `berth serve` on a real (throwaway) PostgreSQL that asks for a password.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { FleetTestBed, stopHost } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

const PASSWORD = "pw-only-the-fleet-knows";
let url = "";

// The cluster's role gets a password and every connection must give it (the throwaway cluster trusts local users).
beforeAll(async () => {
  url = await postgres.freshDatabase();
  const admin = connect(url, { max: 1 });
  try {
    await admin.unsafe(`ALTER ROLE berth PASSWORD '${PASSWORD}'`);
    const [row] = await admin<{ hba_file: string }[]>`SHOW hba_file`;
    writeFileSync(row!.hba_file, "local all all scram-sha-256\n");
    await admin`SELECT pg_reload_conf()`;
  } finally {
    await admin.end();
  }
}, 60_000);

/** `berth serve` with `--store storeUrl` or `--config configFile`, with `env`, and no passfile but the one `env` names (HOME is a temp directory). */
function serve(store: { url: string } | { configFile: string }, env: Record<string, string> = {}) {
  const dataDir = bed.tempDir("berth-credentials-");
  const where = "url" in store ? ["--store", store.url, "--host-id", "host-a"] : ["--config", store.configFile];
  return bed.spawn(["serve", "--port", "0", "--data-dir", dataDir, ...where], {
    XDG_CONFIG_HOME: dataDir,
    HOME: dataDir,
    BERTH_LOG_LEVEL: "info",
    ...env,
  });
}

function withPassword(storeUrl: string): string {
  const parsed = new URL(storeUrl);
  parsed.password = PASSWORD;
  return parsed.toString();
}

describe("a fleet's store password", () => {
  it("is refused on the command line, naming PGPASSWORD and the passfile; never printed", async () => {
    const refused = serve({ url: withPassword(url) });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toContain("--store: the URL holds a password, which every local user can read in the command line (ps)");
    expect(refused.stderr).toMatch(/PGPASSWORD .*~\/\.pgpass, or the file PGPASSFILE names/);
    expect(refused.stderr).not.toContain(PASSWORD);
  }, 60_000);

  it("is taken from PGPASSWORD or the passfile, and never shows in the host's command line; a passfile others can read is refused", async () => {
    // Without one, the database refuses the host: the password below is what lets it in.
    const without = serve({ url }, { PGPASSFILE: join(bed.tempDir("berth-no-passfile-"), "none") });
    expect((await without.exited).code).toBe(1);
    expect(without.stderr).toMatch(/cannot open the PostgreSQL store/);

    const passfile = join(bed.tempDir("berth-passfile-"), "pgpass");
    writeFileSync(passfile, `# the fleet's database\nelsewhere:5432:*:berth:wrong\n*:*:*:berth:${PASSWORD.replace(/:/g, "\\:")}\n`, { mode: 0o600 });
    for (const env of [{ PGPASSFILE: passfile }, { PGPASSWORD: PASSWORD }] as Record<string, string>[]) {
      const host = serve({ url }, env);
      await host.startupLine();
      await expect.poll(() => host.logLines()).toContainEqual(expect.objectContaining({ msg: expect.stringMatching(/^registered in the fleet/) }));
      expect(readFileSync(`/proc/${host.pid}/cmdline`, "utf8")).not.toContain(PASSWORD);
      await stopHost(host);
    }

    chmodSync(passfile, 0o644);
    const open = serve({ url }, { PGPASSFILE: passfile });
    expect((await open.exited).code).toBe(1);
    expect(open.stderr).toContain(`the password file ${passfile} can be read by other users (mode 644): chmod 600 ${passfile}`);
    expect(open.stderr).not.toContain(PASSWORD);
  }, 90_000);
});

describe("a configuration file holding secrets", () => {
  it("is warned about when other local users can read it, naming the settings, never their values; not when it is 0600", async () => {
    const dir = bed.tempDir("berth-config-");
    const configFile = join(dir, "config.json");
    const secret = "a-cluster-secret-of-some-length";
    writeFileSync(configFile, JSON.stringify({ store: withPassword(url), fleet: { secret, hostId: "host-a" } }), { mode: 0o644 });
    chmodSync(configFile, 0o644);
    const readable = serve({ configFile });
    await readable.startupLine();
    const warning = "the configuration file holds secrets and other local users can read it: chmod 600 it";
    await expect
      .poll(() => readable.logLines())
      .toContainEqual(
        expect.objectContaining({ level: 40, msg: warning, path: configFile, mode: "644", secrets: ["fleet.secret", "store (its password)"] }),
      );
    expect(readable.stderr).not.toContain(secret);
    expect(readable.stderr).not.toContain(PASSWORD);
    await stopHost(readable);

    chmodSync(configFile, 0o600);
    const owned = serve({ configFile });
    await owned.startupLine();
    expect(owned.logLines().map((line) => line.msg)).not.toContain(warning);
    await stopHost(owned);
  }, 90_000);
});
