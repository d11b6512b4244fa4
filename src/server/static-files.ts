import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { escapeHtml } from "./escape-html.js";
import { HttpError } from "./http-io.js";

/** Where `npm run build` puts the dashboard; the same path from `src/server` and `dist/server`. */
export const defaultWebDir = fileURLToPath(new URL("../../dist/web/", import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".webmanifest": "application/manifest+json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

export type StaticFile = { readonly name: "index"; readonly path: string } | { readonly name: "asset"; readonly path: string };

/** The dashboard's files: an existing file is served as is, any other path gets `index.html`. */
export class StaticFiles {
  private readonly root: string;

  /** `tokenLinkCommand` goes into the page (`<meta name="berth-token-link">`): what its sign-in screen tells to run. */
  constructor(
    webDir: string,
    private readonly tokenLinkCommand: string,
  ) {
    this.root = normalize(webDir.endsWith(sep) ? webDir : webDir + sep);
  }

  /** Which file answers `pathname`; throws 404 when the dashboard is not built. */
  resolve(pathname: string): StaticFile {
    const index = join(this.root, "index.html");
    if (!existsSync(index)) {
      throw new HttpError(404, "dashboard_not_built", `the dashboard is not built (no ${index}); run npm run build`);
    }
    let relative: string;
    try {
      relative = decodeURIComponent(pathname);
    } catch {
      throw new HttpError(400, "invalid_path", `the path "${pathname}" is not valid percent-encoding`);
    }
    const candidate = normalize(join(this.root, relative));
    // `..` can never leave the web directory: such paths get the page like any unknown one.
    if (candidate.startsWith(this.root) && candidate !== index && isFile(candidate)) return { name: "asset", path: candidate };
    // A built file that is not there (a page older than this build asks for its code): the page in its place would be
    // refused as a script, with nothing said; a 404 names it.
    if (relative.startsWith("/assets/")) {
      throw new HttpError(404, "asset_not_found", `${relative} is not part of this build of the dashboard: reload the page`);
    }
    return { name: "index", path: index };
  }

  send(res: ServerResponse, file: StaticFile, headers: Record<string, string> = {}): void {
    const type = CONTENT_TYPES[extname(file.path)] ?? "application/octet-stream";
    const common = { "Content-Type": type, "X-Content-Type-Options": "nosniff", ...headers };
    if (file.name === "index") {
      const page = readFileSync(file.path, "utf8").replace(
        /(<meta name="berth-token-link" content=")[^"]*(")/,
        (_, before: string, after: string) => before + escapeHtml(this.tokenLinkCommand) + after,
      );
      // Built asset names carry a content hash; the page itself must always be fresh.
      res.writeHead(200, { ...common, "Content-Length": Buffer.byteLength(page), "Cache-Control": "no-store" });
      return void res.end(page);
    }
    res.writeHead(200, { ...common, "Content-Length": statSync(file.path).size, "Cache-Control": "private, max-age=3600" });
    createReadStream(file.path).pipe(res);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
