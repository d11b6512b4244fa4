import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { StoreOpenError } from "../errors.js";

/** What a password is looked up for, as libpq matches a passfile's lines. */
export interface PassfileKey {
  readonly host: string;
  readonly port: string;
  readonly database: string;
  readonly user: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The password for `key` from the passfile, as libpq (`psql`) reads it: the file `PGPASSFILE` names, else
 * `~/.pgpass`; lines `host:port:database:user:password`, `*` matching anything, `\:` and `\\` escaped,
 * `#` comments; the first line that matches wins. Undefined without a file or a matching line. A file
 * other users can read is refused (libpq ignores it with a warning; a refusal says why the start failed).
 */
export function passfilePassword(key: PassfileKey, env: Env = process.env): string | undefined {
  const path = env.PGPASSFILE ?? join(homedir(), ".pgpass");
  let text: string;
  try {
    const mode = statSync(path).mode;
    if ((mode & 0o077) !== 0)
      throw new StoreOpenError(`the password file ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}): chmod 600 ${path}`);
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const wanted = [key.host, key.port, key.database, key.user];
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const fields = passfileFields(line);
    if (fields.length < 5) continue;
    if (wanted.every((value, i) => fields[i] === "*" || fields[i] === value)) return fields[4];
  }
  return undefined;
}

/** A passfile line's five fields, split at its first four unescaped colons, with `\:` and `\\` unescaped. */
function passfileFields(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "\\" && i + 1 < line.length) field += line[++i];
    else if (c === ":" && fields.length < 4) {
      fields.push(field);
      field = "";
    } else field += c;
  }
  fields.push(field.replace(/\r$/, ""));
  return fields;
}
