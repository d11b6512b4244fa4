import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { installGlobally, pack } from "./packed-install.js";
import { table } from "./measure.js";

const repoDir = fileURLToPath(new URL("../../", import.meta.url));
const MB = 1024 * 1024;
/** What a person downloads and keeps: the aims the package is held to. */
const AIM = { packedMB: 3, installedMB: 60 };

/** The package as the registry would carry it, and as `npm install -g` leaves it: sizes and the install's time. */
export async function runPackageBench(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "berth-bench-package-"));
  try {
    const packed = await pack(repoDir, work);
    const installed = await installGlobally(packed.tarball, join(work, "prefix"));
    const mb = (bytes: number) => `${(bytes / MB).toFixed(2)} MB`;
    table("The npm package (npm pack; npm install -g from the tarball, runtime dependencies from the registry)", [
      ["files in the package", String(packed.files.length)],
      ["packed (the tarball)", `${mb(packed.packedBytes)} (aim ≤ ${AIM.packedMB} MB)`],
      ["unpacked (the package alone)", mb(packed.unpackedBytes)],
      ["installed, with runtime dependencies", `${mb(installed.installedBytes)} (aim ≤ ${AIM.installedMB} MB)`],
      [
        "install time (npm's cache warm; better-sqlite3 prebuilt, from this checkout)",
        `${installed.seconds.toFixed(1)} s${installed.sqliteCompiled ? " (SQLite compiled: no prebuilt binary fit)" : ""}`,
      ],
    ]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
