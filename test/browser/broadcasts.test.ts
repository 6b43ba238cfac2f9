import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, startServerProcess, watchErrors, openContext, signIn, expectAccessible, screenshot, sidewaysOverflow, DESKTOP, PHONE, type ServerProcess } from "./browser";

/**
 * "Send broadcast" shows a confirmation before anything is queued (docs/api-decisions.md,
 * "Confirmed broadcasts"): the server's figures — who gets it, who is skipped and why, texts, the
 * time to send — and a second click naming the count; a change to the form drops the
 * confirmation; a broadcast for later is shown back in the business's zone and can be cancelled.
 */
let server: ServerProcess;
let browser: Browser;

/** Broadcasts and messages the server holds: what "queued" would change. */
async function held(): Promise<{ broadcasts: number; messages: number }> {
  const [b, m] = await Promise.all([server.api("/broadcasts"), server.api("/messages?limit=1")]);
  return { broadcasts: b.data.pagination.total, messages: m.data.pagination.total };
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  await server.api("/account/profile", { method: "PUT", json: { name: "Bike shop", country: "US", timeZone: "America/New_York" } });
  const formId = (
    await server.api("/forms", {
      method: "POST",
      json: { name: "Bike repairs", messageTemplate: "Thanks {{firstName}}", fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "UTC" } },
    })
  ).data.form.id;
  // Four customers; the last one texted STOP.
  for (const [phone, firstName] of [["+14155552671", "Ada"], ["+14155552672", "Grace"], ["+14155552673", "Linus"], ["+14155552674", "Ken"]]) {
    const res = await fetch(`${server.url}/v1/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone, firstName }) });
    if (res.status !== 200) throw new Error(`webhook: ${res.status} ${await res.text()}`);
  }
  await server.api("/messages/inbound", { method: "POST", json: { from: "+14155552674", body: "STOP" } });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function openBroadcasts(page: Page) {
  await signIn(page, server.url, server.adminKey, "/broadcasts");
  await page.getByRole("heading", { level: 1, name: "Broadcasts" }).waitFor();
}

describe("desktop, 1280 px", () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    context = await openContext(browser, DESKTOP);
    page = await context.newPage();
    errors = watchErrors(page);
    await openBroadcasts(page);
  });
  afterAll(() => context.close());

  test("Send broadcast shows a confirmation before anything is queued; the second click sends to the count it names", async () => {
    await page.getByLabel("Name (for you)").fill("Spring tune-up");
    await page.getByLabel("Text", { exact: true }).fill("Hi {{firstName}}, spring tune-ups are 20% off this week.");
    await page.getByTestId("recipient-count").getByText(/^3 recipients/).waitFor();
    const before = await held();
    await page.getByRole("button", { name: "Send broadcast" }).click();
    const confirm = page.getByRole("region", { name: "Before you send" });
    await confirm.waitFor();
    await confirm.getByText("3 people get it").waitFor();
    await confirm.getByText(/1 text each, 3 texts in all/).waitFor();
    await confirm.getByText("1 contact has opted out").waitFor();
    // No phone: the time is worked out as if the account's phones were connected, and it says so.
    await confirm.getByText(/Starts now\. No phone is connected right now\. Once one is, about .+ with your 1 phone\./).waitFor();
    await expectAccessible(page, "the broadcast confirmation");
    await screenshot(page, "broadcast-confirm-1280");
    // Nothing is queued by the first click.
    expect(await held()).toEqual(before);

    // Changing the form after the check drops the confirmation: it must be checked again.
    await page.getByLabel("Text", { exact: true }).fill("Hi {{firstName}}, spring tune-ups are 25% off this week.");
    await confirm.waitFor({ state: "detached" });
    expect(await page.getByRole("button", { name: /^Send to / }).count()).toBe(0);
    await page.getByRole("button", { name: "Send broadcast" }).click();
    await confirm.waitFor();
    expect(await held()).toEqual(before);

    await confirm.getByRole("button", { name: "Send to 3 people" }).click();
    await page.getByText("Spring tune-up: 3 texts being queued.").waitFor();
    await page.getByRole("cell", { name: "Spring tune-up", exact: true }).waitFor();
    const after = await held();
    expect(after.broadcasts).toBe(before.broadcasts + 1);
    expect(after.messages).toBe(before.messages + 3);
    const sent = (await server.api("/broadcasts")).data.broadcasts[0];
    expect(sent.content).toBe("Hi {{firstName}}, spring tune-ups are 25% off this week.");
    expect(errors).toEqual([]);
  }, 60_000);

  test("a broadcast for later is shown back in the business's zone, listed as Scheduled, and Cancel stops it", async () => {
    await page.getByLabel("Name (for you)").fill("Saturday ride");
    await page.getByLabel("Text", { exact: true }).fill("Group ride on Saturday at 9, see you there!");
    await page.getByRole("radio", { name: "Later" }).check();
    // Tomorrow in New York, 09:30 there.
    const tomorrow = new Date(Date.now() + 86_400_000).toLocaleDateString("en-CA", { timeZone: "America/New_York" });
    await page.getByLabel("Day", { exact: true }).fill(tomorrow);
    await page.getByLabel("Time (America/New_York)").fill("09:30");
    const weekday = new Date(`${tomorrow}T12:00:00Z`).toLocaleDateString("en-GB", { weekday: "long", timeZone: "UTC" });
    await page.getByText(new RegExp(`^Starts ${weekday}, .* at 09:30 \\(America/New_York\\)\\.`)).waitFor();
    const before = await held();
    await page.getByRole("button", { name: "Send broadcast" }).click();
    const confirm = page.getByRole("region", { name: "Before you send" });
    await confirm.getByText(new RegExp(`Starts ${weekday}, .* at 09:30 \\(America/New_York\\)\\.`)).waitFor();
    expect((await held()).broadcasts).toBe(before.broadcasts);
    await confirm.getByRole("button", { name: "Send to 3 people" }).click();
    await page.getByText(/^Saturday ride: 3 texts scheduled\. It starts /).waitFor();
    const row = page.getByRole("row").filter({ hasText: "Saturday ride" });
    await row.getByRole("cell", { name: "Scheduled", exact: true }).waitFor();
    await row.getByText(`at 09:30 (America/New_York)`).waitFor();
    const b = (await server.api("/broadcasts")).data.broadcasts.find((x: any) => x.name === "Saturday ride");
    expect(b.status).toBe("scheduled");
    await page.getByRole("button", { name: "Cancel Saturday ride" }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel this broadcast?" });
    await dialog.getByText("It has not started: none of its texts will be sent.").waitFor();
    await dialog.getByRole("button", { name: "Cancel broadcast" }).click();
    await row.getByRole("cell", { name: "Cancelled", exact: true }).waitFor();
    const cancelled = (await server.api(`/broadcasts/${b.id}`)).data.broadcast;
    expect(cancelled).toMatchObject({ status: "cancelled", messages: { queued: 0, cancelled: 3 } });
    expect(errors).toEqual([]);
  }, 60_000);

  test("a time already past is refused in plain words, and nothing is checked or queued", async () => {
    await page.getByLabel("Name (for you)").fill("Too late");
    await page.getByRole("radio", { name: "Later" }).check();
    const yesterday = new Date(Date.now() - 2 * 86_400_000).toLocaleDateString("en-CA", { timeZone: "America/New_York" });
    await page.getByLabel("Day", { exact: true }).fill(yesterday);
    const before = await held();
    await page.getByRole("button", { name: "Send broadcast" }).click();
    await page.getByRole("alert").getByText("Choose a time later than now, or send it now.").waitFor();
    expect(await page.getByRole("region", { name: "Before you send" }).count()).toBe(0);
    expect(await held()).toEqual(before);
    await page.getByRole("radio", { name: "Send now" }).check();
  }, 30_000);
});

describe("phone, 390 px", () => {
  test("the confirmation fits the screen: no sideways scroll", async () => {
    const context = await openContext(browser, PHONE);
    try {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await openBroadcasts(page);
      await page.getByLabel("Name (for you)").fill("Phone check");
      await page.getByLabel("Text", { exact: true }).fill("A long enough text to wrap across the narrow screen of a phone, with a link-free sentence.");
      await page.getByTestId("recipient-count").getByText(/^3 recipients/).waitFor();
      const before = await held();
      await page.getByRole("button", { name: "Send broadcast" }).click();
      await page.getByRole("region", { name: "Before you send" }).getByRole("button", { name: "Send to 3 people" }).waitFor();
      expect(await sidewaysOverflow(page, 390)).toEqual([]);
      await expectAccessible(page, "the broadcast confirmation at 390 px");
      await screenshot(page, "broadcast-confirm-390");
      expect(await held()).toEqual(before);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
