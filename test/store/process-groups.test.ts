import { describe, expect, it } from "vitest";
import type { LedgerEntry, ProcessGroupLedger } from "../../src/processes/ledger.js";
import { T0, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

const agent: LedgerEntry = { pgid: 4242, kind: "agent", label: "opencode acp", startTicks: 123456, bootId: "boot-a", startedAt: T0 };
const terminal: LedgerEntry = { pgid: 5150, kind: "terminal", label: "npm test", startTicks: 123999, bootId: "boot-a", startedAt: T0 + 1 };

describe("the process group ledger", () => {
  it("round-trips records through a re-open, oldest first", () => {
    const path = files.path();
    const ledger: ProcessGroupLedger = files.open(path).processGroups;
    ledger.add(terminal);
    ledger.add(agent);

    const reopened: ProcessGroupLedger = files.open(path).processGroups;
    expect(reopened.list()).toEqual([agent, terminal]);
  });

  it("replaces the record of a reused pgid and forgets idempotently", () => {
    const ledger = files.open(files.path()).processGroups;
    ledger.add(agent);
    const reused: LedgerEntry = { ...agent, kind: "service", label: "mcp server", startTicks: 999999, startedAt: T0 + 50 };
    ledger.add(reused);
    expect(ledger.list()).toEqual([reused]);
    ledger.delete(agent.pgid);
    ledger.delete(agent.pgid);
    expect(ledger.list()).toEqual([]);
  });

  it("refuses a pgid that would signal the caller's own group or every process", () => {
    const ledger = files.open(files.path()).processGroups;
    expect(() => ledger.add({ ...agent, pgid: 0 })).toThrow("processGroups.add: pgid must be greater than 1, got 0");
    expect(() => ledger.add({ ...agent, pgid: -7 })).toThrow("processGroups.add: pgid must be a non-negative integer, got -7");
    expect(() => ledger.add({ ...agent, kind: "daemon" as "agent" })).toThrow("kind must be one of agent, terminal, service");
    expect(ledger.list()).toEqual([]);
  });
});
