import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import {
  controlsOfAnswer,
  controlsWithChange,
  controlsWithTurnUsage,
  controlsWithUpdate,
  hasControls,
  noControls,
  requestOf,
} from "../../web/src/chat/agent-controls.js";
import { dashboardSuite, openPage, phone, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 15_000, interval: 50 };

const suite = dashboardSuite();
let main: OpenedPage;
let sessionId: string;

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && main && !main.page.isClosed())
    await screenshot(main.page, `failed-controls-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
});

const controls = (page: Page) => page.getByRole("group", { name: "The agent's settings for this session" });
const picked = (page: Page, label: string) => controls(page).getByLabel(label, { exact: true }).inputValue();

async function send(page: Page, text: string): Promise<void> {
  // The chat has read its session once its agent's controls show (kept by the host, or the agent's answer).
  await controls(page).waitFor();
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
}

describe("the agent's controls: the pure parts", () => {
  const answer = {
    modes: {
      currentModeId: "ask",
      availableModes: [
        { id: "ask", name: "Ask" },
        { id: "code", name: "Code", description: "Writes code" },
      ],
    },
    models: { currentModelId: "small", availableModels: [{ modelId: "small", name: "Small" }] },
    configOptions: [
      {
        id: "effort",
        name: "Effort",
        type: "select",
        currentValue: "low",
        options: [{ group: "fast", name: "Fast", options: [{ value: "low", name: "Low" }] }],
      },
      { id: "web", name: "Web search", type: "boolean", currentValue: false },
      { id: "future", name: "Something new", type: "slider", currentValue: 3 },
    ],
  };

  it("reads pickers and config options from a session answer, grouped choices and switches included, leaving out kinds it does not know", () => {
    const read = controlsOfAnswer(answer);
    expect(read.mode).toEqual({
      current: "ask",
      choices: [
        { value: "ask", name: "Ask", description: null, group: null },
        { value: "code", name: "Code", description: "Writes code", group: null },
      ],
    });
    expect(read.model?.current).toBe("small");
    expect(read.options).toEqual([
      {
        type: "select",
        id: "effort",
        name: "Effort",
        description: null,
        current: "low",
        choices: [{ value: "low", name: "Low", description: null, group: "Fast" }],
      },
      { type: "boolean", id: "web", name: "Web search", description: null, current: false },
    ]);
    expect(hasControls(read)).toBe(true);
    expect(hasControls(noControls)).toBe(false);
    expect(hasControls(controlsOfAnswer({}))).toBe(false);
  });

  it("leaves the mode and model to config options of those categories", () => {
    const both = controlsOfAnswer({
      ...answer,
      configOptions: [
        { ...answer.configOptions[0], category: "mode" },
        { ...answer.configOptions[1], category: "model" },
      ],
    });
    expect(both.mode).toBeNull();
    expect(both.model).toBeNull();
    expect(both.options).toHaveLength(2);
  });

  it("follows updates, turn usage and successful changes, and builds the request for each change", () => {
    const read = controlsOfAnswer(answer);
    expect(controlsWithUpdate(read, { sessionUpdate: "current_mode_update", currentModeId: "code" })?.mode?.current).toBe("code");
    expect(controlsWithUpdate(read, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } })).toBeUndefined();
    const used = controlsWithUpdate(read, { sessionUpdate: "usage_update", used: 10, size: 100, cost: { amount: 0.5, currency: "EUR" } })!;
    expect(used.usage).toEqual({ lastTurn: null, context: { used: 10, size: 100 }, cost: { amount: 0.5, currency: "EUR" } });
    // An update without a cost keeps the last one known.
    expect(controlsWithUpdate(used, { sessionUpdate: "usage_update", used: 20, size: 100 })!.usage.cost).toEqual({ amount: 0.5, currency: "EUR" });
    expect(controlsWithTurnUsage(read, { inputTokens: 3, outputTokens: 4, totalTokens: 7 }).usage.lastTurn).toEqual({
      total: 7,
      input: 3,
      output: 4,
      thought: null,
      cachedRead: null,
      cachedWrite: null,
    });
    expect(controlsWithTurnUsage(read, undefined)).toBe(read);
    expect(controlsWithChange(read, { kind: "option", id: "web", value: true }, {}).options[1]).toMatchObject({ current: true });
    expect(controlsWithChange(read, { kind: "model", value: "small" }, null).model?.current).toBe("small");
    expect(requestOf({ kind: "option", id: "web", value: true }, "s1", read)).toEqual({
      method: "session/set_config_option",
      params: { sessionId: "s1", configId: "web", type: "boolean", value: true },
    });
    expect(requestOf({ kind: "option", id: "effort", value: "low" }, "s1", read).params).toEqual({
      sessionId: "s1",
      configId: "effort",
      value: "low",
    });
    expect(requestOf({ kind: "mode", value: "code" }, "s1", read)).toEqual({
      method: "session/set_mode",
      params: { sessionId: "s1", modeId: "code" },
    });
    expect(requestOf({ kind: "model", value: "small" }, "s1", read)).toEqual({
      method: "session/set_model",
      params: { sessionId: "s1", modelId: "small" },
    });
  });
});

describe("the agent's controls in the chat's header, in a real browser", () => {
  it("shows the demo agent's mode, model and verbosity for a new session, and changes each over ACP", async () => {
    main = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions`);
    const { page } = main;
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("Directory").fill(suite.server.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    sessionId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));

    await expect.poll(() => picked(page, "Mode"), POLL).toBe("ask");
    expect(await picked(page, "Model")).toBe("demo-small");
    expect(await picked(page, "Verbosity")).toBe("normal");
    expect(await controls(page).getByLabel("Mode", { exact: true }).locator("option").allTextContents()).toEqual(["Ask", "Code"]);
    expect(await controls(page).getByLabel("Model").locator("option").allTextContents()).toEqual(["Demo small", "Demo large"]);

    const state = () =>
      suite.server.berth.host.agentState(sessionId) as {
        modes: { currentModeId: string };
        models: { currentModelId: string };
        configOptions: { currentValue: string }[];
      };
    await controls(page).getByLabel("Mode", { exact: true }).selectOption("code");
    await expect.poll(() => state().modes.currentModeId, POLL).toBe("code");
    await controls(page).getByLabel("Model").selectOption("demo-large");
    await expect.poll(() => state().models.currentModelId, POLL).toBe("demo-large");
    await controls(page).getByLabel("Verbosity").selectOption("terse");
    await expect.poll(() => state().configOptions[0]!.currentValue, POLL).toBe("terse");
    // The agent itself holds the new mode.
    await send(page, "/mode");
    await page
      .getByRole("log", { name: "Conversation" })
      .locator(".message.agent", { has: page.getByText("code", { exact: true }) })
      .waitFor();
  });

  it("shows what the agent reported it spent: the last turn's tokens, the context window and the cost", async () => {
    const { page } = main;
    await send(page, "hello world!");
    // The demo agent counts a token per 4 characters: 3 in, 3 out.
    await controls(page).getByText("Last turn 6 tokens").waitFor();
    expect(await controls(page).getByText("Last turn 6 tokens").getAttribute("title")).toBe("Last turn: input 3, output 3 tokens");
    await send(page, "/usage 1200 200000 0.42 USD");
    await controls(page)
      .getByText(/^Context 1\.2K \/ 200K \(1%\)$/)
      .waitFor();
    await controls(page).getByText("Cost $0.42").waitFor();
    await screenshot(page, "controls-desktop-light");
  });

  it("shows the session's current choices and its last context use again when the session is opened anew", async () => {
    const { page } = main;
    await page.reload();
    await expect.poll(() => picked(page, "Mode"), POLL).toBe("code");
    expect(await picked(page, "Model")).toBe("demo-large");
    expect(await picked(page, "Verbosity")).toBe("terse");
    await controls(page)
      .getByText(/^Context 1\.2K \/ 200K/)
      .waitFor();
    await controls(page).getByText("Cost $0.42").waitFor();
    // Shown from what Berth keeps: the page only reads the session, nothing holds it (L9).
    await page.getByRole("button", { name: "Resume" }).waitFor();
    expect(suite.server.berth.host.getSession(sessionId)?.holders).toBe(0);
    // A change holds the session first, then goes to its agent.
    await controls(page).getByLabel("Verbosity").selectOption("normal");
    await expect.poll(() => suite.server.berth.host.getSession(sessionId)?.holders, POLL).toBe(1);
    await expect
      .poll(
        () => (suite.server.berth.host.agentState(sessionId) as { configOptions: { currentValue: string }[] }).configOptions[0]!.currentValue,
        POLL,
      )
      .toBe("normal");
    await main.close();
  });

  it("fits a phone in both schemes", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions/${sessionId}`, {
        ...phone,
        colorScheme,
      });
      // A phone folds the agent's controls into the header's details.
      await opened.page.getByRole("button", { name: "Details" }).tap();
      await expect.poll(() => picked(opened.page, "Mode"), POLL).toBe("code");
      expect(await opened.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
      await screenshot(opened.page, `controls-phone-${colorScheme}`);
      expect(opened.errors).toEqual([]);
      await opened.close();
    }
  });
});
