import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Folders whose files drive real agents and clients (their CLIs start, their turns wait out real TTLs and caps). */
const SLOW_FOLDERS = ["test/real-agents/", "test/clients/"];

/**
 * vitest's order, with the files of {@link SLOW_FOLDERS} first. Without durations from an earlier run (a fresh clone,
 * CI), vitest runs larger files first, and these are small files (a whole-turn file is a few lines calling shared
 * scenarios) that take 20 to 50 s each: run last, one of them ran alone for the suite's last 30 s.
 */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = (file: TestSpecification) => SLOW_FOLDERS.some((folder) => file.moduleId.includes(`/${folder}`));
    return [...sorted.filter(slow), ...sorted.filter((file) => !slow(file))];
  }
}
