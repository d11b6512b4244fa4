import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import type { ServiceConfig } from "../config/config-schema.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import type { ProcessGroupLedger } from "../processes/index.js";
import { FileAccess } from "./file-access.js";
import { PendingQuestions } from "./pending-questions.js";
import type { QuestionAnswer, QuestionRequest } from "./question-types.js";
import { ServiceProcesses } from "./service-processes.js";
import { Terminals } from "./terminals.js";

/** What a location owns and shares between its sessions; started on first need, stopped together. */
export interface LocationServices {
  readonly key: LocationKey;
  readonly questions: PendingQuestions<QuestionRequest, QuestionAnswer>;
  readonly terminals: Terminals;
  readonly services: ServiceProcesses;
  readonly files: FileAccess;
}

export interface LocationServicesDeps {
  readonly services: Readonly<Record<string, ServiceConfig>>;
  readonly terminalOutputDir: string;
  readonly terminalOutputLimit: number;
  readonly stopTimeoutMs: number;
  readonly ledger: ProcessGroupLedger;
  readonly log: (line: string, fields: Record<string, unknown>) => void;
  /** The sandbox of the location's services: one per service process, asked at each start (docs/sandbox.md). */
  readonly sandbox?: () => SandboxPlan | undefined;
}

export async function bootLocationServices(key: LocationKey, deps: LocationServicesDeps): Promise<LocationServices> {
  const services = new ServiceProcesses({
    services: deps.services,
    cwd: key.directory,
    ledger: deps.ledger,
    log: deps.log,
    stopTimeoutMs: deps.stopTimeoutMs,
    sandbox: deps.sandbox,
  });
  const located: LocationServices = {
    key,
    questions: new PendingQuestions(),
    terminals: new Terminals({
      directory: key.directory,
      outputDir: deps.terminalOutputDir,
      outputByteLimit: deps.terminalOutputLimit,
      ledger: deps.ledger,
      stop: { graceMs: deps.stopTimeoutMs },
    }),
    services,
    files: new FileAccess({ roots: [key.directory] }),
  };
  try {
    await services.ensureStarted();
  } catch (error) {
    await services.stopAll();
    throw error;
  }
  return located;
}

/** Stops everything a location runs; each stop is awaited, and what failed is reported after all were tried. */
export async function closeLocationServices(located: LocationServices, reason: string): Promise<void> {
  located.questions.cancelAll(reason);
  const results = await Promise.allSettled([located.terminals.closeAll(), located.services.stopAll()]);
  const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason as unknown] : []));
  if (failures.length > 0) throw new AggregateError(failures, `stopping the services of ${located.key.directory} failed`);
}
