import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { delimiter, join } from "node:path";
import type { AgentCommand } from "../agents/agent-child.js";

/** The variable the shim reads: the loopback address, with its one-time secret, that takes the captured address. */
const CAPTURE_VAR = "BERTH_LOGIN_CAPTURE";
/** Longer than any authorization address; a body past it is refused. */
const MAX_ADDRESS_BYTES = 16 * 1024;

const captureScript = `// Berth: hands the address an agent asked to open in a browser to the Berth host that started it; opens nothing.
const address = process.argv.slice(2).find((arg) => /^https?:\\/\\//i.test(arg)) ?? process.argv[2];
const target = process.env.${CAPTURE_VAR};
if (!address || !target) {
  process.stderr.write("berth: no address to hand over (not started by a Berth login)\\n");
  process.exit(1);
}
const response = await fetch(target, { method: "POST", body: address }).catch(() => undefined);
process.exit(response?.ok ? 0 : 1);
`;

/**
 * Where an agent's `authenticate` "opens a browser" while Berth runs it: the child is started with
 * `BROWSER` naming a Berth-made executable, and an `xdg-open` of the same kind first on its `PATH`
 * (agents that use the `open` npm package call `xdg-open`), each handing the address to this host
 * over loopback with a secret of this login alone. Nothing is opened on the host: the person opens
 * the address on their own device.
 */
export class BrowserCapture {
  private constructor(
    private readonly server: Server,
    private readonly target: string,
    private readonly shims: ShimPaths,
  ) {}

  /** Listens on 127.0.0.1 for the address; `dir`: where the shims are (re)written, in the data directory. */
  static async open(dir: string, onAddress: (address: string) => void): Promise<BrowserCapture> {
    const shims = writeShims(dir);
    const secret = randomBytes(24).toString("base64url");
    const server = createServer((req, res) => {
      if (req.method !== "POST" || req.url !== `/${secret}`) {
        res.writeHead(404).end();
        return;
      }
      readBody(req).then(
        (address) => {
          onAddress(address.trim());
          res.writeHead(204).end();
        },
        () => res.writeHead(413).end(),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const { port } = server.address() as AddressInfo;
    return new BrowserCapture(server, `http://127.0.0.1:${port}/${secret}`, shims);
  }

  /** The agent's command with the shims in its environment. */
  command(command: AgentCommand): AgentCommand {
    const path = command.env.PATH ?? process.env.PATH ?? "";
    return {
      ...command,
      env: { ...command.env, BROWSER: this.shims.browser, PATH: `${this.shims.bin}${delimiter}${path}`, [CAPTURE_VAR]: this.target },
    };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface ShimPaths {
  readonly browser: string;
  readonly bin: string;
}

/** Rewritten for every login: the data directory's files are tightened to 0600 at each start. */
function writeShims(dir: string): ShimPaths {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true, mode: 0o700 });
  const script = join(dir, "capture.mjs");
  replaceFile(script, captureScript, 0o600);
  const launcher = `#!/bin/sh\n# Berth: an agent's login asked to open a browser; the address goes to the Berth host instead.\nexec ${shellQuoted(process.execPath)} ${shellQuoted(script)} "$@"\n`;
  const browser = join(dir, "browser");
  for (const path of [browser, join(bin, "xdg-open")]) replaceFile(path, launcher, 0o700);
  return { browser, bin };
}

/** Whole or not at all: another login's child may be running the file meanwhile. */
function replaceFile(path: string, text: string, mode: number): void {
  const next = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(next, text, { mode });
  renameSync(next, path);
}

function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ADDRESS_BYTES) throw new Error("address too long");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
