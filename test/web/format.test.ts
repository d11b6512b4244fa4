import { describe, expect, it } from "vitest";
import { formatAgo, formatDuration } from "../../web/src/util/format.js";

describe("durations on the dashboard", () => {
  it("reads countdowns at the precision a person needs", () => {
    expect(formatDuration(-5_000)).toBe("0s");
    expect(formatDuration(12_400)).toBe("12s");
    expect(formatDuration(185_000)).toBe("3m 05s");
    expect(formatDuration(3_720_000)).toBe("1h 02m");
    expect(formatDuration(24 * 3_600_000)).toBe("24h 00m");
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe("3d 04h");
  });

  it("says how long ago, coarsely", () => {
    expect(formatAgo(1_000, 1_500)).toBe("just now");
    expect(formatAgo(0, 185_000)).toBe("3m ago");
  });
});
