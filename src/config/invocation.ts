import { realpathSync } from "node:fs";
import { basename, isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { berthPackage } from "../version.js";
import { defaultDataDir } from "./paths.js";

/** How Berth was started, so that every "run this" it prints names a command the user has. */
export type Invocation =
  /** Under `npx <package>`: npm unpacked it into its own cache. */
  | { readonly name: "npx"; readonly packageName: string }
  /** `npm i -g <package>`: the `berth` command is on PATH. */
  | { readonly name: "global" }
  /** `npm i <package>` in a project: `npx berth` runs the project's copy. */
  | { readonly name: "project" }
  /** A clone (`npm start`, `node dist/cli/main.js`): the script by its path. */
  | { readonly name: "checkout"; readonly script: string };

/** The folder holding `package.json`: one level above both `src/` and `dist/`. */
const packageDir = fileURLToPath(new URL("../../", import.meta.url));
/** The CLI's own script, as `node` runs it. */
const cliScript = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/**
 * Tells the ways apart by where the package lies: npx unpacks into `…/_npx/<hash>/node_modules/`, a
 * global install into `<prefix>/lib/node_modules/`, a project
 * install into the project's `node_modules/`; anything else is a checkout.
 */
export function invocationOf(dir: string, name: string, script: string, cwd: string): Invocation {
  const parts = dir.split(sep).filter((part) => part !== "");
  if (parts.at(-1) === basename(name) && parts.includes("node_modules")) {
    if (parts.includes("_npx")) return { name: "npx", packageName: name };
    const modules = parts.lastIndexOf("node_modules");
    // `@scope/name` sits one level deeper than `name`.
    const scoped = name.startsWith("@") ? 1 : 0;
    if (modules === parts.length - 2 - scoped && parts[modules - 1] === "lib") return { name: "global" };
    return { name: "project" };
  }
  const fromCwd = relative(cwd, script);
  return { name: "checkout", script: fromCwd.startsWith("..") || isAbsolute(fromCwd) ? script : fromCwd };
}

/** How this process was started. */
export function currentInvocation(): Invocation {
  return invocationOf(realpathSync(packageDir), berthPackage.name, cliScript, process.cwd());
}

/** The words that run Berth's CLI as it was started here: `berth`, `npx berth-acp`, `node dist/cli/main.js`. */
export function berthCommand(invocation: Invocation = currentInvocation()): string {
  switch (invocation.name) {
    case "npx":
      return `npx ${invocation.packageName}`;
    case "global":
      return "berth";
    case "project":
      return "npx berth";
    case "checkout":
      return `node ${shellQuote(invocation.script)}`;
  }
}

/** What prints the dashboard link with the token for a host on `dataDir`, as this Berth was started. */
export function tokenLinkCommand(dataDir: string): string {
  return `${berthCommand()} token --link${dataDir === defaultDataDir() ? "" : ` --data-dir ${shellQuote(dataDir)}`}`;
}

/** A path as a shell word: bare when it is plain, else single-quoted. */
export function shellQuote(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
