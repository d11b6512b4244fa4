import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/load-config.js";
import { writeOfflineSetup } from "../../support/real-agents.js";

/**
 * docs/host.md "Real agents against a local model endpoint" shows how to point each agent at a
 * model server. Its snippets must stay what the whole-turn tests run: the opencode.json has the
 * shape of the one the tests write (test/support/real-agents.ts), and Berth's configs parse.
 */

const doc = readFileSync(new URL("../../../docs/host.md", import.meta.url), "utf8");
const section = doc.slice(doc.indexOf("## Real agents against a local model endpoint"), doc.indexOf("## Agent children"));

/** The fenced blocks of a language under a `### heading` of the section, in order. */
function blocks(heading: string, language: string): string[] {
  const start = section.indexOf(`### ${heading}\n`);
  const end = section.indexOf("\n### ", start + 1);
  const text = section.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1]!);
}

interface OpencodeConfig {
  provider: Record<string, { npm: string; options: { baseURL: string; apiKey: string }; models: Record<string, unknown> }>;
  model: string;
  small_model: string;
  [key: string]: unknown;
}

describe("docs/host.md: real agents against a local model endpoint", () => {
  it("the opencode.json shown has the shape of the one the tests run opencode with", () => {
    expect(section.length).toBeGreaterThan(0);
    const [shown] = blocks("opencode", "json").map((block) => JSON.parse(block) as OpencodeConfig);
    const root = realpathSync(mkdtempSync(join(tmpdir(), "berth-docs-opencode-")));
    try {
      writeOfflineSetup("opencode", { home: join(root, "home"), cwd: root, modelUrl: "http://127.0.0.1:1" });
      const tested = JSON.parse(readFileSync(join(root, "opencode.json"), "utf8")) as OpencodeConfig;
      expect(Object.keys(shown!).sort()).toEqual(Object.keys(tested).sort());
      for (const config of [shown!, tested]) {
        const [providerId, provider] = Object.entries(config.provider)[0]!;
        expect(provider.npm).toBe("@ai-sdk/openai-compatible");
        expect(provider.options.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
        expect(provider.options.apiKey).toBeTypeOf("string");
        const [modelName] = Object.keys(provider.models);
        expect(config.model).toBe(`${providerId}/${modelName}`);
        expect(config.small_model).toBe(config.model);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("the Berth configurations shown parse", () => {
    const configs = ["opencode", "claude-agent-acp"].flatMap((heading) => blocks(heading, "json")).filter((block) => block.includes('"agents"'));
    expect(configs).toHaveLength(2);
    for (const config of configs) expect(() => parseConfig(JSON.parse(config))).not.toThrow();
  });
});
