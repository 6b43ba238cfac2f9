import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, signIn, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * The inbox of requests: what visitors sent, newest first, unread ones marked, a filter by form;
 * a request opened is read; an opted-out visitor's request says to reply another way; the
 * contact's timeline and the conversation show the request with its answers, at 1280 and 390 px
 * with axe (docs/api-decisions.md, "The owner hears back", every request kept).
 */
let server: ServerProcess;
let browser: Browser;
let contactUs: any;
let orders: any;
const post = async (formId: string, json: Record<string, unknown>) => {
  const res = await fetch(`${server.url}/v1/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).data;
};

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  await server.api("/account/profile", { method: "PUT", json: { name: "Rosa's Bakery", country: "US", timeZone: "UTC" } });
  const form = (name: string, fields: unknown[]) =>
    server.api("/forms", { method: "POST", json: { name, messageTemplate: "Thanks {{firstName}}!", fields, settings: { delayMinutes: 0, timezone: "UTC" } } });
  contactUs = (await form("Contact us", [{ name: "firstName", type: "text", label: "Your name" }, { name: "message", type: "text", label: "Message" }])).data.form;
  orders = (await form("Cake orders", [{ name: "firstName", type: "text", label: "Name" }, { name: "cake", type: "text", label: "Which cake" }])).data.form;
  const ann = await post(contactUs.id, { phoneNumber: "+14155550101", firstName: "Ann", message: "Do you bake gluten-free bread?" });
  await post(contactUs.id, { phoneNumber: "+14155550101", firstName: "Ann", message: "Me again, any news?" });
  await post(orders.id, { phoneNumber: "+14155550102", firstName: "Bob", cake: "Chocolate, 20 people" });
  // Carla opted out, then wrote again.
  const carla = await post(contactUs.id, { phoneNumber: "+14155550103", firstName: "Carla", message: "Hi" });
  await server.api(`/contacts/${carla.contactId}/opt-out`, { method: "POST", json: { reason: "asked by phone" } });
  await post(contactUs.id, { phoneNumber: "+14155550103", firstName: "Carla", message: "Can you call me about a wedding cake?" });
  expect(ann.contactId).toBeTruthy();
}, 60_000);
/** Waits until the locator matches `n` elements. */
async function expectCount(l: import("playwright-core").Locator, n: number) {
  for (let i = 0; i < 100 && (await l.count()) !== n; i++) await Bun.sleep(100);
  expect(await l.count()).toBe(n);
}
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("the inbox of requests", () => {
  for (const [label, screen, width] of [["1280", DESKTOP, 1280], ["390", PHONE, 390]] as const) {
    test(`at ${label} px: newest first, unread marked, filtered by form; opening one reads it and links to the conversation`, async () => {
      const context = await openContext(browser, screen);
      const page = await context.newPage();
      const errors = watchErrors(page);
      try {
        await signIn(page, server.url, server.adminKey, "/inbox");
        await page.getByRole("heading", { level: 1, name: "Requests" }).waitFor();
        const list = page.getByRole("list", { name: "Requests, newest first" });
        await list.waitFor();
        const items = list.getByRole("listitem");
        expect(await items.count()).toBe(5);
        await expect(items.first().innerText()).resolves.toContain("Can you call me about a wedding cake?");
        await items.first().getByText("opted out of texts: reply another way").waitFor();
        await items.nth(3).getByText("Me again, any news?").waitFor();
        await expectAccessible(page, `the inbox at ${label} px`);
        expect(await sidewaysOverflow(page, width)).toEqual([]);
        await screenshot(page, `inbox-${label}`);

        await page.getByLabel("Form").selectOption({ label: "Cake orders" });
        await list.getByText("Chocolate, 20 people").waitFor();
        await expectCount(list.getByRole("listitem"), 1);
        expect(new URL(page.url()).searchParams.get("formId")).toBe(orders.id);
        await page.getByLabel("Form").selectOption({ label: "All forms" });
        await expectCount(list.getByRole("listitem"), 5);

        // Open one of Ann's requests (each size its own, still unread): its answers by label, then read.
        const words = label === "1280" ? "Do you bake gluten-free bread?" : "Me again, any news?";
        const first = list.getByRole("listitem").filter({ hasText: words });
        await first.getByText("new", { exact: true }).waitFor();
        await first.getByRole("link").click();
        await page.getByRole("heading", { level: 1, name: "Request from Ann" }).waitFor();
        await page.getByText(words).waitFor();
        await page.getByText("Message", { exact: true }).waitFor();
        await expectAccessible(page, `a request at ${label} px`);
        expect(await sidewaysOverflow(page, width)).toEqual([]);
        await page.getByRole("link", { name: "Conversation", exact: true }).click();
        // The conversation shows the request that started it, before the automatic text.
        const thread = page.getByRole("list", { name: "Messages, oldest first" });
        await thread.getByText("Do you bake gluten-free bread?").waitFor();
        await thread.getByText("Me again, any news?").waitFor();
        await expectAccessible(page, `a conversation with its requests at ${label} px`);
        // The contact's timeline too.
        await page.getByRole("link", { name: "Contact page" }).click();
        await page.getByRole("heading", { level: 2, name: "Timeline" }).waitFor();
        const timeline = page.getByRole("list", { name: "Timeline, newest first" });
        await timeline.getByText("Me again, any news?").waitFor();
        await timeline.getByText("Do you bake gluten-free bread?").waitFor();
        expect(await sidewaysOverflow(page, width)).toEqual([]);
        await page.goto(`${server.url}/inbox?unread=true`);
        await page.getByRole("heading", { level: 1, name: "Requests" }).waitFor();
        await page.getByRole("checkbox", { name: "Unread only" }).waitFor();
        expect(await page.getByRole("checkbox", { name: "Unread only" }).isChecked()).toBe(true);
        await page.getByRole("list", { name: "Requests, newest first" }).waitFor();
        expect(await page.getByText(words).count()).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
