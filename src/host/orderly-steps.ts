import type { Logger } from "./logger.js";

/**
 * The steps of a stop, run one after another, each whatever happened to the ones before it: a step that fails is
 * logged (`message`, with the `step` and the error's stack) and named in {@link failed}; the next one runs.
 */
export class OrderlySteps {
  readonly failed: string[] = [];

  constructor(
    private readonly log: Logger,
    private readonly message: string,
  ) {}

  async run(name: string, step: () => unknown): Promise<void> {
    try {
      await step();
    } catch (error) {
      this.failed.push(name);
      this.log.error({ err: error, step: name }, this.message);
    }
  }
}
