/**
 * A host name under which Berth may also be reached, behind a reverse proxy: requests with that
 * `Host` are served, and pages at that name (on `port`, or the default port of their scheme)
 * are Berth's own origin. A name, not a pattern: no wildcards, no scheme, no path.
 */
export interface AllowedHost {
  /** Lower case, without a trailing dot. */
  readonly name: string;
  readonly port?: number;
}

export const ALLOWED_HOST_FORM = 'expected a host name such as "berth.example.internal", optionally with ":port"';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** `berth.example.internal` or `berth.example.internal:8443`; undefined when it is not one. */
export function parseAllowedHost(text: string): AllowedHost | undefined {
  const match = /^([^:]+)(?::(\d{1,5}))?$/.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const name = match[1]!.replace(/\.$/, "");
  const labels = name.split(".");
  // An IP literal is allowed as a Host already; an all-numeric last label is one.
  if (name.length > 253 || !labels.every((label) => LABEL.test(label)) || /^\d+$/.test(labels.at(-1)!)) return undefined;
  if (match[2] === undefined) return { name };
  const port = Number(match[2]);
  return port >= 1 && port <= 65_535 ? { name, port } : undefined;
}
