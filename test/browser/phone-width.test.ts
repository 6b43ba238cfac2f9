import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, screenshot, startServerProcess, watchErrors, type ServerProcess, expectAccessible, openContext, signIn as signInAt, sidewaysOverflow, DESKTOP, PHONE } from "./browser";
import { SmsGateEmulator } from "../helpers/smsgate-emulator";
import { tempDir } from "../helpers/server";

/**
 * Every page of the dashboard at 390 px, seeded with long names, long e-mails, long templates
 * and a wide import file: nothing scrolls sideways (not the page, not a table inside its box),
 * and the actions of every table row are on screen as cards. docs/api-decisions.md, "The
 * dashboard at phone width, in plain words".
 */
let server: ServerProcess;
let browser: Browser;
let phone: SmsGateEmulator;
const LONG_NAME = "Maximiliana-Alexandrina";
const LONG_LAST = "Wolfeschlegelsteinhausenbergerdorff";
const LONG_EMAIL = "maximiliana.alexandrina.wolfeschlegelsteinhausenbergerdorff@a-very-long-company-domain-name.example";
const LONG_TEXT = `Hi {{firstName}}, thanks for asking about the kitchen and bathroom renovation: our surveyor calls you back within two working days. https://example.com/${"x".repeat(60)}`;
const ids: Record<string, string> = {};
let importFile = "";

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  const form = await server.api("/forms", {
    method: "POST",
    json: {
      name: "Kitchen and bathroom renovation enquiries for the north-east district",
      messageTemplate: LONG_TEXT,
      fields: [
        { name: "firstName", type: "text", label: "Your first name as you would like us to use it" },
        { name: "whichServiceWouldYouLikeUsToQuoteFor", type: "text", label: "Which service would you like us to quote for" },
      ],
      settings: { delayMinutes: 0, timezone: "UTC" },
    },
  });
  ids.form = form.data.form.id;
  // An automation of the form, so the webhook posts below start runs (its list, builder and page; a contact's runs).
  ids.automation = (
    await server.api("/automations", {
      method: "POST",
      json: {
        name: "Thank-you and review request for every kitchen and bathroom renovation enquiry",
        formId: ids.form,
        steps: [
          { template: LONG_TEXT, delay: "2d", sendAt: "10:00" },
          { template: `How did we do, {{firstName}}? Tell us here: https://example.com/review/${"y".repeat(60)}`, delay: "1w", sendAt: "10:00" },
        ],
        stopOnStatus: ["converted"],
      },
    })
  ).data.automation.id;
  const contact = await server.api("/contacts", {
    method: "POST",
    json: { phoneNumber: "+14155550160", firstName: LONG_NAME, lastName: LONG_LAST, email: LONG_EMAIL, tags: ["kitchen-renovation-2026", "north-east-district-enquiries"] },
  });
  ids.contact = contact.data.contact.id;
  // A phone that fails every text it takes ("no signal"): one failed attempt, retried later.
  const token = (await server.api("/devices/registration-tokens", { method: "POST", json: {} })).data.token;
  phone = new SmsGateEmulator({ base: `${server.url}/api/mobile/v1`, name: "The shop's old Samsung Galaxy phone by the till", behaviour: "fail" });
  await phone.register(token);
  await phone.loadSettings();
  ids.failed = (await server.api("/messages", { method: "POST", json: { contactId: ids.contact, content: LONG_TEXT.replace("{{firstName}}", LONG_NAME) } })).data.message.id;
  await phone.pull();
  // Then queued texts that stay queued (the phone is not asked again), a customer's "help" and its auto-reply.
  for (const n of [1, 2]) {
    const res = await fetch(`${server.url}/v1/forms/${ids.form}/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ phoneNumber: `+1415555017${n}`, firstName: `${LONG_NAME}${n}`, whichServiceWouldYouLikeUsToQuoteFor: "a complete refit of the upstairs bathroom" }),
    });
    if (res.status !== 200) throw new Error(`webhook: ${res.status} ${await res.text()}`);
    ids[`runner${n}`] = ((await res.json()) as { data: { contactId: string } }).data.contactId;
  }
  // The phone's clock runs 20 s ahead: the server caps the time at its own, the instant the reply is
  // queued; the reply is still listed after the "help" (a tie is not guaranteed here: the API test pins it).
  await server.api("/messages/inbound", { method: "POST", json: { from: "+14155550160", body: "help", receivedAt: new Date(Date.now() + 20_000).toISOString() } });
  await server.api("/broadcasts", {
    method: "POST",
    json: { name: "Spring renovation open day at the showroom for every kitchen enquiry", content: LONG_TEXT, segment: { tags: ["kitchen-renovation-2026"] } },
  });
  await server.api("/api-keys", { method: "POST", json: { permission: "standard_access" } }).catch(() => {});
  // A file as a spreadsheet exports it: many columns, long headers and values.
  const header = ["First name of the customer", "Family name of the customer", "Mobile phone number", "E-mail address at work", "Preferred day for the survey visit", "Notes from the showroom", "Postcode"];
  const row = [LONG_NAME, LONG_LAST, "+14155550199", LONG_EMAIL, "Saturday morning before eleven", "Wants the ".repeat(12), "NE1-1234567890"];
  importFile = join(tempDir("textwire-wide-"), "wide.csv");
  writeFileSync(importFile, [header, row, row].map((r) => r.map((v) => `"${v}"`).join(",")).join("\n"));
}, 90_000);
afterAll(async () => {
  phone?.disconnect();
  await browser?.close();
  await server?.stop();
});

async function fits(page: Page, what: string, width: number) {
  const out = await sidewaysOverflow(page, width);
  if (out.length) throw new Error(`${what} at ${width} px:\n${out.join("\n")}`);
}

describe("every page at phone width, 390 px", () => {
  test("no page scrolls sideways; every table's actions are on screen", async () => {
    const context = await openContext(browser, PHONE);
    try {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await signInAt(page, server.url, server.adminKey, "/overview");
      await page.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
      const pages: Array<[string, string, (p: Page) => Promise<unknown>]> = [
        ["overview", "/overview", (p) => p.getByText("Failed attempts today").waitFor()],
        ["forms", "/forms", (p) => p.locator("tr[data-form-id]").first().waitFor()],
        ["form-new", "/forms/new", (p) => p.getByLabel("Text message template").waitFor()],
        ["form", `/forms/${ids.form}`, (p) => p.getByRole("heading", { level: 1, name: /Forms: edit/ }).waitFor()],
        ["messages", "/messages", (p) => p.locator("tr[data-message-id]").first().waitFor()],
        ["message", `/messages/${ids.failed}`, (p) => p.getByText("The phone had no signal.").first().waitFor()],
        ["conversations", "/conversations", (p) => p.getByRole("link", { name: new RegExp(LONG_NAME) }).first().waitFor()],
        ["conversation", `/conversations/${ids.contact}`, (p) => p.locator(".bubble").nth(1).waitFor()],
        ["contacts", "/contacts", (p) => p.locator("tr[data-contact-id]").first().waitFor()],
        ["contact", `/contacts/${ids.contact}`, (p) => p.getByText(LONG_EMAIL).first().waitFor()],
        ["contact-export", "/contacts/export", (p) => p.getByRole("heading", { level: 1 }).waitFor()],
        ["automations", "/automations", (p) => p.getByRole("link", { name: /^Thank-you and review request/ }).waitFor()],
        ["automation-new", "/automations/new", (p) => p.getByRole("list", { name: "Time line" }).getByRole("listitem").first().waitFor()],
        ["automation", `/automations/${ids.automation}`, (p) => p.getByRole("link", { name: new RegExp(`^${LONG_NAME}1`) }).waitFor()],
        ["contact-runs", `/contacts/${ids.runner1}`, (p) => p.getByRole("button", { name: /^Stop Thank-you and review request/ }).waitFor()],
        ["broadcasts", "/broadcasts", (p) => p.getByRole("button", { name: /^Cancel Spring renovation/ }).waitFor()],
        ["devices", "/devices", (p) => p.locator(".device-card").first().waitFor()],
        ["devices-add", "/devices/add", (p) => p.getByText("Waiting for the phone to connect").waitFor()],
        ["settings", "/settings/developers", (p) => p.getByRole("button", { name: /^Revoke key/ }).first().waitFor()],
      ];
      for (const [name, path, ready] of pages) {
        await page.goto(`${server.url}${path}`);
        await ready(page);
        await fits(page, name, 390);
        await expectAccessible(page, `${name} at 390 px`);
        await screenshot(page, `${name}-phone-width-390`);
      }

      // Overview and Devices count failed attempts the same way: the retried "no signal" failure is 1 on both.
      await page.goto(`${server.url}/overview`);
      const tile = page.locator(".tile", { hasText: "Failed attempts today" });
      await tile.waitFor();
      expect(await tile.locator(".tile-value").textContent()).toBe("1");
      expect(await page.locator(".tile", { hasText: "Failed for good today" }).locator(".tile-value").textContent()).toBe("0");
      await page.goto(`${server.url}/devices`);
      const card = page.locator(".device-card").first();
      await card.waitFor();
      expect(await card.locator("div", { hasText: "Failed attempts today" }).locator("dd").textContent()).toBe("1");
      // The conversation in the order things happened: the customer's "help", then the auto-reply.
      await page.goto(`${server.url}/conversations/${ids.contact}`);
      await page.locator(".bubble").nth(2).waitFor();
      const bubbles = await page.locator(".bubble").evaluateAll((els) => els.map((e) => [e.classList.contains("inbound") ? "in" : "out", e.querySelector(".bubble-text")!.textContent]));
      const help = bubbles.findIndex(([d, t]) => d === "in" && t === "help");
      expect(help).toBeGreaterThanOrEqual(0);
      expect(bubbles[help + 1]?.[0]).toBe("out");
      // The failed attempt reads as a sentence, its code on a detail line.
      await page.goto(`${server.url}/messages/${ids.failed}`);
      const step = page.locator('li[data-kind="attempt_failed"]');
      await step.waitFor();
      expect(await step.textContent()).toContain("Sending failed: The phone had no signal.");
      expect(await step.locator(".code-detail").textContent()).toBe(" Code: RESULT_ERROR_NO_SERVICE");

      // The same actions at this width, found by role and name and on screen.
      const inView = async (loc: ReturnType<Page["locator"]>) => {
        const box = (await loc.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(390);
      };
      await page.goto(`${server.url}/messages`);
      await page.locator("tr[data-message-id]").first().waitFor();
      await inView(page.getByRole("button", { name: /^Cancel the message to/ }).first());
      await inView(page.locator("tr[data-message-id] .badge").first());
      await page.goto(`${server.url}/settings/developers`);
      await inView(page.getByRole("button", { name: /^Revoke key/ }).first());
      await page.goto(`${server.url}/forms`);
      await page.locator("tr[data-form-id]").first().waitFor();
      await inView(page.getByRole("button", { name: /^Delete Kitchen/ }));

      // The import column picker with a wide file.
      await page.goto(`${server.url}/contacts/import`);
      await page.getByLabel("CSV or Excel file").setInputFiles(importFile);
      await page.getByLabel("Import column Notes from the showroom as").waitFor();
      await fits(page, "contact-import with a wide file", 390);
      await inView(page.getByLabel("Import column Notes from the showroom as"));
      await expectAccessible(page, "contact-import at 390 px");
      await screenshot(page, "contact-import-phone-width-390");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  test("at 1280 px the same pages are tables, and they fit too", async () => {
    const context = await openContext(browser, DESKTOP);
    try {
      const page = await context.newPage();
      await signInAt(page, server.url, server.adminKey, "/messages");
      await page.locator("tr[data-message-id]").first().waitFor();
      expect(await page.locator("table.messages thead").isVisible()).toBe(true);
      await fits(page, "messages", 1280);
      await screenshot(page, "messages-phone-width-1280");
      await page.goto(`${server.url}/contacts`);
      await page.locator("tr[data-contact-id]").first().waitFor();
      await screenshot(page, "contacts-phone-width-1280");
      await page.goto(`${server.url}/overview`);
      await page.locator(".chart canvas").first().waitFor();
      await screenshot(page, "overview-phone-width-1280");
    } finally {
      await context.close();
    }
  }, 60_000);
});
