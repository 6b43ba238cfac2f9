import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, startServerProcess, watchErrors, openContext, signIn, DESKTOP, type ServerProcess } from "./browser";

/**
 * The dashboard never locks itself out (docs/api-decisions.md, "The dashboard never locks itself
 * out; honest status"): pages fetch little, a session has its own limiter, and a 429 is retried by
 * itself with a notice while the page keeps what it shows. The account keeps the default API
 * limits here (100 a minute): the session must not spend them.
 */
const NAV = ["Overview", "Forms", "Messages", "Conversations", "Contacts", "Broadcasts", "Devices", "Settings"];
/** Requests a page may make when it opens (the Overview: its own answer and /health). */
const MAX_REQUESTS: Record<string, number> = {
  // The overview, /health and the phones (a paused phone is named: docs/phones.md).
  Overview: 4,
  // Settings is a stack of sections, each loading its own part (keys, sessions, limits, replies,
  // keyword replies, SMSGate clients, backups, replication, the public certificate); bounded here so
  // it cannot grow unseen.
  Settings: 9,
};
const MAX_REQUESTS_OTHER = 4;

let server: ServerProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let formId: string;
/** Every API request the page made (path and query), and every 429 or 503 it was answered. */
const requests: string[] = [];
const refusals: string[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  // Back to the plan's limits: the shared helper gives the key room for tests of other things.
  const update = Bun.spawn([process.execPath, join(import.meta.dir, "../../src/main.ts"), "accounts", "update", server.accountId, "--api-burst-per-minute", "none", "--api-limit-per-hour", "none", "--db", server.dbPath], { stdout: "ignore", stderr: "pipe" });
  if ((await update.exited) !== 0) throw new Error("accounts update failed: " + (await new Response(update.stderr).text()));
  formId = (
    await server.api("/forms", {
      method: "POST",
      json: { name: "Bike repairs", messageTemplate: "Hi {{firstName}}, your bike is booked in.", fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "UTC" } },
    })
  ).data.form.id;
  const res = await fetch(`${server.url}/v1/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155552671", firstName: "Ada" }) });
  if (res.status !== 200) throw new Error(`webhook: ${res.status} ${await res.text()}`);
  context = await openContext(browser, DESKTOP);
  page = await context.newPage();
  errors = watchErrors(page);
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/v1/") || u.pathname === "/health") requests.push(u.pathname + u.search);
  });
  page.on("response", (r) => {
    if (r.status() === 429 || r.status() === 503) refusals.push(`${r.status()} ${r.url()}`);
  });
  await signIn(page, server.url, server.adminKey, "/overview");
  await page.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
}, 60_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

async function open(name: string) {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { level: 1, name: new RegExp(name) }).waitFor();
}

describe("the dashboard never locks itself out", () => {
  test("each page fetches what it shows in a few requests", async () => {
    const counts: Record<string, number> = {};
    for (const name of NAV) {
      await open(name === "Overview" ? "Forms" : "Overview");
      await page.waitForTimeout(800);
      requests.length = 0;
      await open(name);
      if (name === "Overview") await page.getByText("Last 7 days").waitFor();
      // Let the page's loads settle (a slow machine: generous).
      await page.waitForTimeout(1500);
      counts[name] = requests.filter((r) => !r.startsWith("/v1/messages/live") && !r.startsWith("/v1/live")).length;
    }
    console.log("requests per page load:", JSON.stringify(counts));
    for (const name of NAV) expect({ name, n: counts[name] <= (MAX_REQUESTS[name] ?? MAX_REQUESTS_OTHER) }).toEqual({ name, n: true });
  }, 60_000);

  test("300 page navigations in a row never show a rate-limit message", async () => {
    for (let i = 0; i < 300; i++) {
      await open(NAV[i % NAV.length]);
      if (i % 25 === 0) expect(await page.getByText(/rate limit|too many requests/i).count()).toBe(0);
    }
    // The last page finishes loading, then nothing on it speaks of a limit or a busy server.
    await page.waitForTimeout(1000);
    expect(await page.getByText(/rate limit|too many requests|server is busy/i).count()).toBe(0);
    expect(refusals).toEqual([]);
    expect(errors).toEqual([]);
  }, 240_000);

  test("a 429 shows a plain notice, is retried by itself, and the page keeps its data", async () => {
    await open("Contacts");
    await page.getByRole("link", { name: "Ada" }).waitFor();
    let refused = 0;
    await page.route(/\/v1\/contacts\?.*search=nobody/, async (route) => {
      if (refused++ === 0) {
        await route.fulfill({
          status: 429,
          headers: { "Content-Type": "application/json", "Retry-After": "2" },
          body: JSON.stringify({ status: "error", code: "RATE_LIMIT_EXCEEDED", message: "API rate limit exceeded; retry in 2 seconds", retryAfter: 2 }),
        });
      } else await route.continue();
    });
    await page.getByLabel("Search").fill("nobody");
    const notice = page.getByRole("status").filter({ hasText: "The server is busy; trying again in" });
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/^The server is busy; trying again in [12] seconds?…$/);
    // While it waits, the contacts already shown stay, and no error replaces them.
    expect(await page.getByRole("link", { name: "Ada" }).count()).toBe(1);
    expect(await page.getByText(/rate limit/i).count()).toBe(0);
    expect(await page.getByRole("alert").count()).toBe(0);
    // Then it asks again by itself: the notice goes, the answer shows.
    await notice.waitFor({ state: "hidden", timeout: 10_000 });
    await page.getByRole("link", { name: "Ada" }).waitFor({ state: "detached", timeout: 10_000 });
    expect(refused).toBe(2);
    await page.unroute(/\/v1\/contacts\?.*search=nobody/);
  }, 30_000);
});

describe("honest status", () => {
  test("Overview warns, with what to do, that no phone is connected and that backups are off; not about plain HTTP on this machine", async () => {
    await open("Overview");
    await page.getByText("Last 7 days").waitFor();
    const noPhone = page.locator('[data-warning="no-phone"]');
    expect(await noPhone.textContent()).toContain("Texts wait until a phone connects");
    expect(await noPhone.getByRole("link", { name: "Add a phone" }).getAttribute("href")).toBe("/devices/add");
    expect(await page.locator('[data-warning="backups-off"]').textContent()).toContain("Backups are off");
    // Reached at 127.0.0.1: the plain-HTTP warning is for other machines only.
    expect(await page.locator('[data-warning="plain-http"]').count()).toBe(0);
    // Run from the project folder (bun src/main.ts), so commands shown start with npx.
    expect(await page.locator('[data-warning="backups-off"]').textContent()).toContain("npx textwire serve --backup-dir");
  }, 30_000);

  test("the test submission says texts wait until a phone connects instead of an estimated time", async () => {
    await page.goto(`${server.url}/forms/${formId}`);
    await page.getByRole("heading", { level: 1, name: /Forms: edit/ }).waitFor();
    await page.getByLabel("Also send it to my phone").check();
    await page.getByLabel("Your phone number").fill("+1 415 555 0199");
    await page.getByRole("button", { name: "Send a test submission" }).click();
    const outcome = page.getByTestId("test-outcome");
    await outcome.getByText(/on its way to \+14155550199/).waitFor();
    const text = (await outcome.textContent()) ?? "";
    expect(text).toContain("texts wait until a phone connects");
    expect(text).not.toContain("Expected to go out");
    expect(await outcome.getByRole("link", { name: "Add a phone" }).getAttribute("href")).toBe("/devices/add");
  }, 30_000);

  test("the phone wizard shows its commands as this server runs them", async () => {
    await page.goto(`${server.url}/devices/add`);
    await page.getByRole("heading", { level: 1, name: "Devices: add a phone" }).waitFor();
    await page.getByText(/npx textwire tls init/).first().waitFor({ state: "attached" });
    expect(await page.locator("code", { hasText: /^textwire / }).count()).toBe(0);
  }, 30_000);
});
