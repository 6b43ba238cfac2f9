import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * Settings → Being told: a staff person gives their mobile and chooses what to hear about; a bad
 * number is shown on its field; a new request then texts them through the shop's phones, at 1280
 * and 390 px with axe (docs/api-decisions.md, "The owner hears back", the team told).
 */
let server: ServerProcess;
let browser: Browser;
let formId: string;

async function person(name: string, email: string, password: string) {
  const inv = await server.api("/invitations", { method: "POST", json: { role: "staff", email } });
  const token = String(inv.data.url).split("#")[1];
  const res = await fetch(`${server.url}/v1/invitations/accept`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token, name, email, password }) });
  expect(res.status).toBe(201);
}

async function signInAs(page: Page, email: string, password: string) {
  await page.goto(`${server.url}/settings/me`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 2, name: "Being told" }).waitFor();
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  await server.api("/account/profile", { method: "PUT", json: { name: "Rosa's Bakery", country: "US", timeZone: "UTC" } });
  formId = (await server.api("/forms", { method: "POST", json: { name: "Contact us", messageTemplate: "Thanks!", fields: [{ name: "message", type: "text", label: "Message" }], settings: { delayMinutes: 0, timezone: "UTC" } } })).data.form.id;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("Settings: being told", () => {
  for (const [label, screen, width, n] of [["1280", DESKTOP, 1280, 1], ["390", PHONE, 390, 2]] as const) {
    test(`at ${label} px: a staff person chooses to be texted about new requests; a request then texts them`, async () => {
      const email = `sam${n}@bakery.example`;
      await person(`Sam ${n}`, email, "flour-and-sugar-9");
      const context = await openContext(browser, screen);
      const page = await context.newPage();
      const errors = watchErrors(page);
      try {
        await signInAs(page, email, "flour-and-sugar-9");
        const phone = page.getByLabel("Your mobile number");
        await phone.fill("12");
        await page.getByRole("checkbox", { name: "New requests from the forms" }).check();
        await page.getByRole("button", { name: "Save", exact: true }).click();
        await page.locator("#me-phone-error").waitFor();
        expect(await phone.getAttribute("aria-invalid")).toBe("true");
        await expectAccessible(page, `being told, with an error, at ${label} px`);

        const mobile = `+1415555020${n}`;
        await phone.fill(`(415) 555-020${n}`);
        await page.getByRole("button", { name: "Save", exact: true }).click();
        await page.getByText("Saved. You will be told about new requests.").waitFor();
        expect(await phone.inputValue()).toBe(mobile);
        await page.reload();
        await page.getByRole("heading", { level: 2, name: "Being told" }).waitFor();
        await page.getByLabel("Your mobile number").waitFor();
        expect(await page.getByLabel("Your mobile number").inputValue()).toBe(mobile);
        expect(await page.getByRole("checkbox", { name: "New requests from the forms" }).isChecked()).toBe(true);
        expect(await page.getByRole("checkbox", { name: "Not at night" }).isChecked()).toBe(true);
        expect(await page.getByText(/API key|standard key/).count()).toBe(0);
        await expectAccessible(page, `being told at ${label} px`);
        expect(await sidewaysOverflow(page, width)).toEqual([]);
        await screenshot(page, `being-told-${label}`);

        // Switch the quiet hours off (the test runs at any hour), then a request texts them.
        await page.getByRole("checkbox", { name: "Not at night" }).uncheck();
        await page.getByRole("button", { name: "Save", exact: true }).click();
        await page.getByText("Saved. You will be told about new requests.").waitFor();
        const res = await fetch(`${server.url}/v1/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: `+1415555030${n}`, message: "Do you bake gluten-free bread?" }) });
        expect(res.status).toBe(200);
        let text: any;
        for (let i = 0; i < 100 && !text; i++) {
          await Bun.sleep(200);
          text = (await server.api("/messages?limit=100")).data.messages.find((m: any) => m.recipientPhone === mobile);
        }
        expect(text?.content).toMatch(/^New request from \+1415555030\d \(Contact us\): Do you bake gluten-free bread\? http:\/\/\S+\/inbox\/[0-9a-f-]{36}$/);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
