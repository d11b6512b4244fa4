// prom-client is loaded at the first scrape or record. If it cannot be (a broken install), a scrape says so, the host
// goes on, and once it loads every record that came meanwhile is counted.
import type * as Prometheus from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { ClientBufferBudget } from "../../src/server/client-buffer-budget.js";
import { BerthMetrics } from "../../src/server/metrics.js";
import { closeAllHosts, startHost, text } from "../host/host-harness.js";

afterEach(closeAllHosts);

describe("the metrics library that cannot be loaded", () => {
  it("fails the scrape with what went wrong, loads at the next one, and counts the turns that ended meanwhile", async () => {
    const { host, workDir } = await startHost();
    let tries = 0;
    const loadPrometheus = async (): Promise<typeof Prometheus> => {
      tries++;
      if (tries === 1) throw new Error("Cannot find package 'prom-client'");
      return import("prom-client");
    };
    const metrics = new BerthMetrics(host, () => 0, new ClientBufferBudget({ budgetBytes: 1 << 20, highWaterBytes: 1 << 16 }), loadPrometheus);
    try {
      const session = await host.createSession({ cwd: workDir });
      const ticket = host.hold(session.id, "client");
      await ticket.child;
      // The first record to count (the child acquired) tried to load it; it failed.
      await expect.poll(() => tries).toBe(1);
      for (const words of ["one", "two"]) expect((await host.prompt(session.id, text(words))).stopReason).toBe("end_turn");

      const scraped = await metrics.render();
      expect(tries).toBe(2);
      expect(scraped.text).toMatch(/^berth_turns_total\{outcome="end_turn"\} 2$/m);
      ticket.release();
    } finally {
      metrics.close();
    }
  });

  it("a scrape while it cannot be loaded names the library and why", async () => {
    const { host } = await startHost();
    const metrics = new BerthMetrics(
      host,
      () => 0,
      new ClientBufferBudget({ budgetBytes: 1 << 20, highWaterBytes: 1 << 16 }),
      async () => {
        throw new Error("Cannot find package 'prom-client'");
      },
    );
    try {
      await expect(metrics.render()).rejects.toThrow("the metrics library (prom-client) could not be loaded: Cannot find package 'prom-client'");
      await expect(metrics.render()).rejects.toThrow(/could not be loaded/);
    } finally {
      metrics.close();
    }
  });
});
