import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  isCallExpression,
  isConditionalExpression,
  isNewExpression,
  isNoSubstitutionTemplateLiteral,
  isObjectLiteralExpression,
  isParenthesizedExpression,
  isPropertyAccessExpression,
  isPropertyAssignment,
  isStringLiteral,
  isTemplateExpression,
  isVariableDeclaration,
  type Node,
  type SourceFile,
} from "typescript/unstable/ast";
import { API } from "typescript/unstable/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Every log line Berth writes is a public interface, so each one's message is named as code (`…`) in docs/
 * (docs/serve.md's "Log lines" table, or the table of the page about its subsystem) or README.md. The TypeScript
 * compiler (its API runs as a child process, closed after) reads src/ with its checker: a log call is a call of
 * pino's `trace`/`debug`/`info`/`warn`/`error`/`fatal` whatever the logger is named (`controller.error` or
 * `console.error` are not); its message is pino's, the first argument when it is a string, else the second. A
 * template literal counts by its fixed head, a conditional by both its branches. A message handed in from elsewhere
 * must be in {@link forwarded}, which says where its texts come from, so no line goes unread.
 */

const root = fileURLToPath(new URL("../", import.meta.url));
const LEVELS = new Set(["trace", "debug", "info", "warn", "error", "fatal"]);

/** Where a message handed to a log call comes from: the calls that hand it (by their callee's text) and which argument. */
interface Forwarded {
  /** The file of the log call, and its message argument's text. */
  readonly file: string;
  readonly message: string;
  /** The calls whose argument is the message, in these files (all of src/ when absent). */
  readonly from: { readonly callee: string; readonly argument: number; readonly files?: readonly string[] } | { readonly objects: readonly string[] };
}

const forwarded: readonly Forwarded[] = [
  // A stop's steps: each failing step is logged with the message its runner was made with.
  { file: "src/host/orderly-steps.ts", message: "this.message", from: { callee: "new OrderlySteps", argument: 1 } },
  // A session taken up by this host of a fleet: adopted, or taken back.
  { file: "src/host/fleet.ts", message: "message", from: { callee: "this.takeUp", argument: 4 } },
  // Lifecycle records: one line each, the message of its kind.
  { file: "src/host/host-records.ts", message: "message", from: { objects: ["recordMessages", "hostMessages"] } },
  // The lines of a location's service processes and of agents' terminal logins, written through the host's logger.
  { file: "src/host/host-composition.ts", message: "line", from: { callee: "this.log", argument: 0, files: ["src/location/service-process.ts"] } },
  { file: "src/host/host.ts", message: "line", from: { callee: "this.options.log", argument: 0, files: ["src/logins/login-runner.ts"] } },
];

interface LogLine {
  /** `src/…:line`, where the message is written in the source. */
  readonly at: string;
  /** The message, or the fixed head of a template literal. */
  readonly message: string;
  readonly template: boolean;
}

let api: API | undefined;
let lines: LogLine[] = [];
/** Log calls whose message cannot be read, and forwarded entries that match nothing: both fail the test. */
let unread: string[] = [];

beforeAll(() => {
  api = new API({ cwd: root });
  const project = api.updateSnapshot({ openProject: join(root, "tsconfig.json") }).getProjects()[0]!;
  const files = project.program
    .getSourceFileNames()
    .filter((name) => name.startsWith(join(root, "src/")))
    .map((name) => project.program.getSourceFile(name)!);
  const nodes = files.flatMap((file) => descendants(file).map((node) => ({ file, node })));
  const candidates = nodes.flatMap(({ file, node }) =>
    isCallExpression(node) && isPropertyAccessExpression(node.expression) && LEVELS.has(node.expression.name.text)
      ? [{ file, node, method: node.expression.name }]
      : [],
  );
  // Batched: one request to the checker for every candidate's method.
  const methods = project.checker.getSymbolAtLocation(candidates.map(({ method }) => method));
  const logCalls = candidates.filter((_, index) =>
    methods[index]?.declarations.some((declaration) => declaration.path.includes("/node_modules/pino/")),
  );

  const found: LogLine[] = [];
  const unreadable: string[] = [];
  // A call the checker cannot resolve (an `any` receiver) could be a log line: it must be typed to be told apart.
  candidates.forEach(({ file, node }, index) => {
    if (methods[index] === undefined)
      unreadable.push(`${where(file, node)}: \`${node.expression.getText(file)}\` resolves to nothing the checker knows`);
  });
  const used = new Set<Forwarded>();
  for (const { file, node } of logCalls) {
    const [first, second] = node.arguments;
    const message = first !== undefined && textsOf(first) !== undefined ? first : second;
    if (message === undefined) {
      unreadable.push(`${where(file, node)}: a log line with no message`);
      continue;
    }
    const texts = textsOf(message);
    if (texts) {
      found.push(...texts.map((text) => ({ at: where(file, message), ...text })));
      continue;
    }
    const entry = forwarded.find((f) => f.file === pathOf(file) && f.message === message.getText(file));
    if (entry) used.add(entry);
    else unreadable.push(`${where(file, message)}: the message \`${message.getText(file)}\` is handed in: say where it comes from in \`forwarded\``);
  }
  for (const entry of forwarded) {
    if (!used.has(entry)) unreadable.push(`forwarded: ${entry.file} has no log call with the message \`${entry.message}\``);
    const sources = sourcesOf(entry, nodes);
    if (sources.length === 0) unreadable.push(`forwarded: nothing hands ${entry.file} its message \`${entry.message}\``);
    for (const { file, node } of sources) {
      const texts = textsOf(node);
      if (texts) found.push(...texts.map((text) => ({ at: where(file, node), ...text })));
      else unreadable.push(`${where(file, node)}: the message \`${node.getText(file)}\` forwarded to ${entry.file} is not a string`);
    }
  }
  lines = found;
  unread = unreadable;
}, 60_000);

afterAll(() => api?.close());

describe("log lines", () => {
  it("every log call's message is read from the source", () => {
    expect(lines.length).toBeGreaterThan(100);
    expect(unread).toEqual([]);
  });

  it("every message is in docs/*.md or README.md", () => {
    const docs = [
      ...readdirSync(join(root, "docs"))
        .filter((name) => name.endsWith(".md"))
        .map((name) => join(root, "docs", name)),
      join(root, "README.md"),
    ]
      .map((path) => readFileSync(path, "utf8"))
      .join("\n");
    // Named as code (`message`, which may wrap across lines), as the log-line tables and the pages' text name a
    // line, outside code blocks; a template by its head.
    const named = [...docs.replace(/^ *```[\s\S]*?^ *```$/gm, "").matchAll(/`([^`]+)`/g)].map((match) => match[1]!.replace(/\s+/g, " "));
    const missing = lines
      .filter((line) => !named.some((name) => (line.template ? name.startsWith(line.message) : name === line.message)))
      .map((line) => `${line.at}: "${line.message}"`);
    expect(missing).toEqual([]);
  });
});

function descendants(node: Node): Node[] {
  const found: Node[] = [];
  const visit = (child: Node): void => {
    found.push(child);
    child.forEachChild(visit);
  };
  node.forEachChild(visit);
  return found;
}

/** A message's texts: a string, a template's fixed head, each branch of a conditional; undefined if it is none of these. */
function textsOf(node: Node): Pick<LogLine, "message" | "template">[] | undefined {
  if (isStringLiteral(node) || isNoSubstitutionTemplateLiteral(node)) return [{ message: node.text, template: false }];
  if (isTemplateExpression(node)) return [{ message: node.head.text, template: true }];
  if (isParenthesizedExpression(node)) return textsOf(node.expression);
  if (isConditionalExpression(node)) {
    const [whenTrue, whenFalse] = [textsOf(node.whenTrue), textsOf(node.whenFalse)];
    return whenTrue && whenFalse ? [...whenTrue, ...whenFalse] : undefined;
  }
  return undefined;
}

/** The expressions a forwarded message comes from. */
function sourcesOf(entry: Forwarded, nodes: readonly { file: SourceFile; node: Node }[]): { file: SourceFile; node: Node }[] {
  const { from } = entry;
  if ("objects" in from) {
    return nodes.flatMap(({ file, node }) =>
      isVariableDeclaration(node) && from.objects.includes(node.name.getText(file)) && node.initializer && isObjectLiteralExpression(node.initializer)
        ? node.initializer.properties.filter(isPropertyAssignment).map((property) => ({ file, node: property.initializer }))
        : [],
    );
  }
  return nodes.flatMap(({ file, node }) => {
    if (from.files && !from.files.includes(pathOf(file))) return [];
    if (!isCallExpression(node) && !isNewExpression(node)) return [];
    const callee = isNewExpression(node) ? `new ${node.expression.getText(file)}` : node.expression.getText(file);
    const argument = callee === from.callee ? node.arguments?.[from.argument] : undefined;
    return argument ? [{ file, node: argument }] : [];
  });
}

function pathOf(file: SourceFile): string {
  return relative(root, file.fileName);
}

function where(file: SourceFile, node: Node): string {
  return `${pathOf(file)}:${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}`;
}
