import { existsSync, realpathSync } from "node:fs";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { berthPackage } from "../version.js";
import { defaultDataDir } from "./paths.js";

/** How Berth was started, so that every "run this" it prints names a command the user has. */
export type Invocation =
  /** A one-off run from a package manager's cache (`npx`, `pnpm dlx`, `yarn dlx`, `bunx`), which it may clear. */
  | { readonly name: "cache" }
  /** `npm i -g <package>`: the `berth` command is on PATH. */
  | { readonly name: "global" }
  /** Another install (a project's dependency, another manager's global folder): `npx <package>` finds it or fetches it. */
  | { readonly name: "package" }
  /** A clone (`npm start`, `node dist/cli/main.js`): the script by its path from the working directory, and by its whole path. */
  | { readonly name: "checkout"; readonly script: string; readonly path: string };

/** The folder holding `package.json`: one level above both `src/` and `dist/`. */
const packageDir = fileURLToPath(new URL("../../", import.meta.url));
/** The CLI's own script, as `node` runs it. */
const cliScript = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
/** Folders of package managers' caches for one-off runs. */
const CACHE_FOLDER = /^(_npx|dlx|dlx-.*|bunx-.*)$/;

/**
 * Tells the ways apart by where the package lies: a one-off cache (`…/_npx/<hash>/node_modules/`,
 * `…/dlx/…`), npm's global folder (`<prefix>/lib/node_modules/<package>`, with the `berth` command npm
 * linked in `<prefix>/bin/`), any other `node_modules`; anything else is a checkout.
 */
export function invocationOf(dir: string, name: string, script: string, cwd: string, exists: (path: string) => boolean = existsSync): Invocation {
  const parts = dir.split(sep).filter((part) => part !== "");
  if (parts.at(-1) === basename(name) && parts.includes("node_modules")) {
    if (parts.some((part) => CACHE_FOLDER.test(part))) return { name: "cache" };
    const modules = parts.lastIndexOf("node_modules");
    // `@scope/name` sits one level deeper than `name`.
    const scoped = name.startsWith("@") ? 1 : 0;
    const prefix = `${sep}${parts.slice(0, modules - 1).join(sep)}`;
    const npmGlobal = modules === parts.length - 2 - scoped && parts[modules - 1] === "lib" && exists(join(prefix, "bin", "berth"));
    return { name: npmGlobal ? "global" : "package" };
  }
  const fromCwd = relative(cwd, script);
  return { name: "checkout", script: fromCwd.startsWith("..") || isAbsolute(fromCwd) ? script : fromCwd, path: script };
}

/** How this process was started. */
export function currentInvocation(): Invocation {
  return invocationOf(realpathSync(packageDir), berthPackage.name, cliScript, process.cwd());
}

/**
 * The words that run Berth's CLI as it was started here: `berth`, `npx berth-acp`, `node dist/cli/main.js`.
 * `page`: for a page anyone who reaches the port may load, naming no path of this machine (a clone's script relative
 * to the clone); `program`: for a command another program runs from any directory (a clone's script by its whole path).
 */
export function berthWords(invocation: Invocation = currentInvocation(), where: "terminal" | "page" | "program" = "terminal"): string[] {
  switch (invocation.name) {
    case "global":
      return ["berth"];
    case "cache":
    case "package":
      return ["npx", berthPackage.name];
    case "checkout":
      return ["node", where === "page" ? "dist/cli/main.js" : where === "program" ? invocation.path : invocation.script];
  }
}

/** {@link berthWords} as one line to type. */
export function berthCommand(invocation: Invocation = currentInvocation(), where: "terminal" | "page" = "terminal"): string {
  return berthWords(invocation, where).map(shellQuote).join(" ");
}

/**
 * What prints the dashboard link with the token for a host on `dataDir`, as this Berth was started; on a `page`, a data
 * directory of its own is named by a placeholder, not its path.
 */
export function tokenLinkCommand(dataDir: string, where: "terminal" | "page" = "terminal"): string {
  const flag = dataDir === defaultDataDir() ? "" : ` --data-dir ${where === "page" ? "<its data directory>" : shellQuote(dataDir)}`;
  return `${berthCommand(currentInvocation(), where)} token --link${flag}`;
}

/** A path as a shell word: bare when it is plain, else single-quoted. */
export function shellQuote(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
