import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dashboardSuite, openPage, phone, screenshot, type OpenedPage } from "./dashboard-harness.js";

const oauthAgent = join(import.meta.dirname, "../server/fixtures/oauth-agent.mjs");
const POLL = { timeout: 20_000, interval: 50 };

const suite = dashboardSuite({ agents: { oauth: { command: process.execPath, args: [oauthAgent] } }, defaultAgent: "oauth" });
let opened: OpenedPage | undefined;

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && opened && !opened.page.isClosed())
    await screenshot(opened.page, `failed-agent-login-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
  await opened?.close();
  opened = undefined;
});

/** Every address the page asked for (its own requests, not its links). */
async function openRecorded(path: string): Promise<{ page: OpenedPage["page"]; requested: string[] }> {
  const requested: string[] = [];
  opened = await openPage(suite.launched.browser, suite.server.url, path, phone, async (page) => {
    page.context().on("request", (request) => requested.push(request.url()));
  });
  return { page: opened.page, requested };
}

describe("logging an agent in from another device", () => {
  it("shows the address the agent opened, takes the pasted callback address and says logged in, never asking the agent's port itself", async () => {
    const { page, requested } = await openRecorded(`/?token=${suite.server.token}#/agents/oauth/login/provider`);
    const dialog = page.getByRole("dialog", { name: "Log in to oauth: Log in with the provider" });
    await dialog.getByRole("button", { name: "Start login" }).click();
    await dialog.getByRole("button", { name: "Open the agent's link…" }).click();
    const link = dialog.getByRole("link", { name: "Open provider.invalid" });
    const address = new URL((await link.getAttribute("href"))!);
    expect(address.origin).toBe("https://provider.invalid");
    await screenshot(page, "agent-login-paste");

    // What the provider would send the browser back to: the agent's callback on the host's localhost.
    const callback = new URL(address.searchParams.get("redirect_uri")!);
    callback.searchParams.set("code", "C");
    callback.searchParams.set("state", address.searchParams.get("state")!);
    const wrongPort = new URL(callback);
    wrongPort.port = String(Number(callback.port) === 65535 ? 1 : Number(callback.port) + 1);
    const field = dialog.getByLabel("Paste the address your browser ended on");
    await field.fill(wrongPort.href);
    await dialog.getByRole("button", { name: "Finish the login" }).click();
    await expect.poll(() => dialog.getByRole("alert").textContent(), POLL).toContain("does not match the login's redirect_uri");

    await field.fill(callback.href);
    await dialog.getByRole("button", { name: "Finish the login" }).click();
    await expect.poll(() => dialog.getByRole("status").textContent(), POLL).toContain("Logged in");
    await screenshot(page, "agent-login-logged-in");
    expect(requested.filter((url) => !url.startsWith(`${suite.server.url}/`))).toEqual([]);
    expect(opened!.errors).toEqual([]);
  });

  it("finishes a login another client started, found waiting for its callback", async () => {
    const started = (await suite.server.berth.host.startAgentLogin("oauth", { methodId: "provider" })) as { address: string };
    const { page } = await openRecorded(`/?token=${suite.server.token}#/agents/oauth/login/provider`);
    const dialog = page.getByRole("dialog", { name: "Log in to oauth: Log in with the provider" });
    await dialog.getByRole("button", { name: "Open the agent's link…" }).click();
    expect(await dialog.getByRole("link", { name: "Open provider.invalid" }).getAttribute("href")).toBe(started.address);
    const address = new URL(started.address);
    const callback = new URL(address.searchParams.get("redirect_uri")!);
    callback.searchParams.set("code", "C");
    callback.searchParams.set("state", address.searchParams.get("state")!);
    await dialog.getByLabel("Paste the address your browser ended on").fill(callback.href);
    await dialog.getByRole("button", { name: "Finish the login" }).click();
    await expect.poll(() => dialog.getByRole("status").textContent(), POLL).toContain("Logged in");
  });

  it("logs in with an environment-variable method from a password field, and the value is nowhere in the page after", async () => {
    const { page } = await openRecorded(`/?token=${suite.server.token}#/agents/oauth/login/api-key`);
    const dialog = page.getByRole("dialog", { name: "Log in to oauth: API key" });
    const field = dialog.getByLabel("FIXTURE_API_KEY");
    expect(await field.getAttribute("type")).toBe("password");
    await field.fill("wrong-key");
    await dialog.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => dialog.getByRole("alert").textContent(), POLL).toContain("The login failed: the API key was refused");
    expect(await field.inputValue()).toBe("");

    await field.fill("right-key");
    await dialog.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => dialog.getByRole("status").textContent(), POLL).toContain("Logged in");
    const values = await page.locator("input").evaluateAll((inputs) => inputs.map((input) => (input as { value: string }).value));
    expect(values.join(" ")).not.toContain("right-key");
    expect(await page.content()).not.toContain("right-key");
    expect(opened!.errors).toEqual([]);
  });
});
