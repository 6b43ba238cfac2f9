import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, screenshot, startServerProcess, watchErrors, type ServerProcess, expectAccessible, openContext, signIn as signInAt, DESKTOP, PHONE } from "./browser";
import { tempDir } from "../helpers/server";

/**
 * Forms and Settings in a real browser against a real server process: a form built
 * with its protections, a test submission tried from the page, a new webhook address, the
 * opt-out reply, a backup run and downloaded by an operator and the scheduled ones listed; an
 * admin key that is not an operator's sees no backup button. axe-core and screenshots at 1280
 * and 390 px (test-output/screens/forms-*, settings-*).
 */
let server: ServerProcess;
let browser: Browser;
let backupDir: string;
const SCHEDULED = "textwire-20261101T020000Z.db";

beforeAll(async () => {
  backupDir = tempDir("textwire-web-backups-");
  mkdirSync(backupDir, { recursive: true });
  // A scheduled backup made earlier (the schedule's first run is a day after start).
  const db = new Database(join(backupDir, SCHEDULED));
  db.exec("CREATE TABLE t (x)");
  db.close();
  const at = Date.UTC(2026, 10, 1, 2) / 1000;
  utimesSync(join(backupDir, SCHEDULED), at, at);
  [server, browser] = await Promise.all([startServerProcess(["--backup-dir", backupDir, "--backup-every", "24h"]), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(backupDir, { recursive: true, force: true });
});

async function signIn(page: Page, key: string) {
  await signInAt(page, server.url, key, "/overview");
  await page.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
}


/** Waits (up to 10 s) until `check` holds. */
async function until(check: () => Promise<boolean>) {
  for (const end = Date.now() + 10_000; !(await check()); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${check}`);
    await Bun.sleep(100);
  }
}

const nav = (page: Page, name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });

describe("Forms and Settings, desktop 1280 px, operator key", () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let formId: string;
  beforeAll(async () => {
    context = await openContext(browser, DESKTOP, { acceptDownloads: true });
    page = await context.newPage();
    errors = watchErrors(page);
    await signIn(page, server.adminKey);
  });
  afterAll(() => context?.close());

  test("a form is built with its protections; an API refusal is shown next to the field it names", async () => {
    await nav(page, "Forms").click();
    await page.getByRole("link", { name: "New form" }).click();
    await page.getByRole("heading", { level: 1, name: "Forms: new form" }).waitFor();
    // A new form starts with the recommended protections.
    expect(await page.getByLabel("Ignore repeats of the same number for (minutes)").inputValue()).toBe("10");
    expect(await page.getByLabel("Texts per phone number per day").inputValue()).toBe("5");
    expect(await page.getByLabel("Phone numbers only from (country codes)").inputValue()).toBe("US");
    expect(await page.getByLabel("Hidden spam trap field").isChecked()).toBe(true);

    await page.getByLabel("Form name").fill("Bike repairs");
    await page.getByLabel("Field 1 label").fill("First name");
    await page.getByLabel("Text message template").fill("Hi {{firstName}}, your bike is booked in. Reply STOP to opt out.");
    await page.getByLabel("Submissions per visitor per minute").fill("20");
    await page.getByLabel("Phone numbers only from (country codes)").fill("US, XX");
    // The dashboard's own address is listed so its test submission is accepted.
    await page.getByLabel("Allowed websites (one a line)").fill(`https://bikes.example\n${server.url}`);
    await page.getByLabel("Thank-you page (address)").fill("https://bikes.example/thanks");
    await page.getByLabel("Quiet hours from").fill("22:00");
    await page.getByLabel("Quiet hours until").fill("07:00");
    await page.getByRole("button", { name: "Create form" }).click();
    const countries = page.getByLabel("Phone numbers only from (country codes)");
    await page.locator("#prot-allowedCountries-error").getByText(/two-letter ISO code/).waitFor();
    expect(await countries.getAttribute("aria-invalid")).toBe("true");
    expect(await countries.getAttribute("aria-describedby")).toContain("prot-allowedCountries-error");
    await page.getByRole("alert").getByText(/The form was not saved/).waitFor();
    await expectAccessible(page, "the form builder with an error");
    await screenshot(page, "forms-builder-error-1280");

    await countries.fill("US, CA");
    await page.getByRole("button", { name: "Create form" }).click();
    await page.getByRole("heading", { level: 1, name: "Forms: edit Bike repairs" }).waitFor();
    formId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]);
    const saved = (await server.api(`/forms/${formId}`)).data.form;
    expect(saved.settings).toEqual({
      timezone: "UTC",
      delayMinutes: 0,
      defaultPriority: "normal",
      duplicateWindowMinutes: 10,
      ipLimitPerMinute: 20,
      recipientLimitPerDay: 5,
      allowedCountries: ["US", "CA"],
      allowedOrigins: ["https://bikes.example", server.url],
      honeypotField: "_gotcha",
      allowLinksInValues: false,
      successUrl: "https://bikes.example/thanks",
      errorUrl: null,
      captcha: null,
      quietHours: { start: "22:00", end: "07:00" },
    });
    // The edit page shows what was stored.
    expect(await page.getByLabel("Submissions per visitor per minute").inputValue()).toBe("20");
    await expectAccessible(page, "a form's page");
    await screenshot(page, "forms-builder-1280");
    expect(errors).toEqual([]);
  }, 40_000);

  test("a test submission shows the text and writes nothing; sent to my phone it links to the test text; a refusal is in plain words", async () => {
    const before = (await server.api("/messages?limit=100")).data.messages.length;
    await page.getByLabel("Mobile phone number (sample, never texted)").fill("+1 415 555 0199");
    await page.getByRole("button", { name: "Send a test submission" }).click();
    const outcome = page.getByTestId("test-outcome");
    await outcome.getByText(/^The form accepts these values/).waitFor();
    await outcome.getByText(/your bike is booked in/).waitFor();
    // What the website's posts meet that the test skips.
    await outcome.getByText("Posts are accepted only from https://bikes.example, " + server.url + ".").waitFor();
    expect((await server.api("/messages?limit=100")).data.messages.length).toBe(before);

    await page.getByLabel("Also send it to my phone").check();
    await page.getByLabel("Your phone number").fill("+1 415 555 0198");
    await page.getByRole("button", { name: "Send a test submission" }).click();
    await outcome.getByText(/on its way to \+14155550198/).waitFor();
    const href = await outcome.getByRole("link", { name: "See the test text" }).getAttribute("href");
    const msg = (await server.api(`/messages/${decodeURIComponent(href!.split("/")[2])}`)).data.message;
    expect(msg).toMatchObject({ recipientPhone: "+14155550198", contactId: null });
    expect(msg.content).toContain("your bike is booked in");
    await page.getByLabel("Also send it to my phone").uncheck();

    // A British mobile number: this form texts only US and Canadian numbers.
    await page.getByLabel("Mobile phone number (sample, never texted)").fill("+44 7911 123456");
    await page.getByRole("button", { name: "Send a test submission" }).click();
    await outcome.getByText("Your website would refuse these values: Please enter a mobile phone number (US, CA).").waitFor();
    await expectAccessible(page, "a form's page after a test submission");
    await screenshot(page, "forms-test-submission-1280");
    expect(errors).toEqual([]);
  }, 30_000);

  test("a new webhook address: the old one stops working at once", async () => {
    const oldUrl = (await server.api(`/forms/${formId}`)).data.form.webhookUrl;
    await page.getByRole("button", { name: "Make a new address" }).click();
    const dialog = page.getByRole("dialog", { name: "Make a new webhook address?" });
    await dialog.getByText(/stops working at once/).waitFor();
    await expectAccessible(page, "the new address dialog");
    await dialog.getByRole("button", { name: "Make a new address" }).click();
    await page.getByText(/the old one stopped working/).waitFor();
    const newUrl = (await server.api(`/forms/${formId}`)).data.form.webhookUrl;
    expect(newUrl).not.toBe(oldUrl);
    await page.locator("code", { hasText: newUrl }).first().waitFor();
    const post = (url: string) =>
      fetch(url.replace(/^https?:\/\/[^/]+/, server.url), { method: "POST", headers: { "Content-Type": "application/json", Origin: "https://bikes.example" }, body: JSON.stringify({ phoneNumber: "+14155550188" }) });
    expect((await post(oldUrl)).status).toBe(404);
    expect((await post(newUrl)).status).toBe(200);
    expect(errors).toEqual([]);
  }, 30_000);

  test("the forms list shows texts and conversion per form and offers a new address and delete", async () => {
    // A second visitor posts from the website (the new-address test posted the first; the
    // dashboard's tests write nothing).
    const { webhookUrl } = (await server.api(`/forms/${formId}`)).data.form;
    const r = await fetch(webhookUrl, { method: "POST", headers: { "Content-Type": "application/json", Origin: "https://bikes.example" }, body: JSON.stringify({ phoneNumber: "+14155550191", firstName: "Kim" }) });
    expect(r.status).toBe(200);
    await page.getByRole("link", { name: "← All forms" }).click();
    await page.getByRole("heading", { level: 1, name: "Forms" }).waitFor();
    const row = page.locator(`tr[data-form-id="${formId}"]`);
    await row.getByText("0 sent of 2").waitFor();
    await row.getByText("0 of 2 (0%)").waitFor();
    await row.getByRole("button", { name: "New webhook address for Bike repairs" }).waitFor();
    await row.getByRole("button", { name: "Delete Bike repairs" }).waitFor();
    await expectAccessible(page, "the forms list");
    await screenshot(page, "forms-list-1280");

    // Accepting off and on again.
    const accepting = row.getByLabel("Bike repairs accepts submissions");
    await accepting.uncheck();
    await page.getByText("Bike repairs no longer accepts submissions.").waitFor();
    expect((await server.api(`/forms/${formId}`)).data.form.isActive).toBe(false);
    await accepting.check();
    await page.getByText("Bike repairs accepts submissions again.").waitFor();
    expect((await server.api(`/forms/${formId}`)).data.form.isActive).toBe(true);

    // A new address from the list, after the same confirmation.
    const before = (await server.api(`/forms/${formId}`)).data.form.webhookUrl;
    await row.getByRole("button", { name: "New webhook address for Bike repairs" }).click();
    const rotate = page.getByRole("dialog", { name: "Make a new webhook address for Bike repairs?" });
    await rotate.getByText(/stops working at once/).waitFor();
    await rotate.getByRole("button", { name: "Make a new address" }).click();
    await page.getByText("Bike repairs has a new webhook address; the old one stopped working. Update your website.").waitFor();
    const after = (await server.api(`/forms/${formId}`)).data.form.webhookUrl;
    expect(after).not.toBe(before);
    await row.locator("code", { hasText: after }).waitFor();

    // Delete asks for the form's name to be typed.
    const old = (await server.api("/forms", { method: "POST", json: { name: "Old promo", messageTemplate: "Hi!", fields: [{ name: "firstName", type: "text" }] } })).data.form;
    await page.reload();
    await page.getByRole("button", { name: "Delete Old promo" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete Old promo?" });
    const confirm = dialog.getByRole("button", { name: "Delete form" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel("Form name").fill("Old prom");
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel("Form name").fill("Old promo");
    await confirm.click();
    await page.getByText("Old promo deleted, with its contacts and messages.").waitFor();
    await page.locator(`tr[data-form-id="${old.id}"]`).waitFor({ state: "detached" });
    expect((await fetch(`${server.url}/v1/forms/${old.id}`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).status).toBe(404);
    expect(errors).toEqual([]);
  }, 30_000);

  test("a captcha's secret is asked for, kept on the server and never shown again", async () => {
    await page.goto(`${server.url}/forms/${encodeURIComponent(formId)}`);
    await page.getByRole("heading", { level: 1, name: "Forms: edit Bike repairs" }).waitFor();
    await page.getByLabel("Captcha", { exact: true }).selectOption("turnstile");
    await page.getByLabel("Captcha site key (public)").fill("0x4AAAAAAAsite");
    await page.getByRole("button", { name: "Save form" }).click();
    const secret = page.getByLabel("Captcha secret key");
    await page.locator("#prot-captchaSecret-error").getByText(/secret is required/).waitFor();
    expect(await secret.getAttribute("aria-invalid")).toBe("true");
    await secret.fill("0x4AAAAAAAsecret");
    await page.getByRole("button", { name: "Save form" }).click();
    await page.getByText("Form saved.").waitFor();
    expect((await server.api(`/forms/${formId}`)).data.form.settings.captcha).toEqual({ provider: "turnstile", secret: "••••", siteKey: "0x4AAAAAAAsite" });
    const stored = () => {
      const db = new Database(server.dbPath, { readonly: true });
      try {
        return JSON.parse((db.query("SELECT settings FROM forms WHERE id = ?").get(formId) as { settings: string }).settings).captcha;
      } finally {
        db.close();
      }
    };
    expect(stored().secret).toBe("0x4AAAAAAAsecret");
    // The page never holds the secret; saving again with the box empty keeps it.
    expect(await secret.inputValue()).toBe("");
    expect(await secret.getAttribute("placeholder")).toBe("saved: leave empty to keep");
    await page.getByLabel("Description (for you)").fill("Booking form on bikes.example");
    await page.getByRole("button", { name: "Save form" }).click();
    await until(async () => (await server.api(`/forms/${formId}`)).data.form.description === "Booking form on bikes.example");
    // The test says what the website's visitors meet that it skips.
    await page.getByRole("button", { name: "Send a test submission" }).click();
    await page.getByTestId("test-outcome").getByText("On your website, visitors also pass the “I am not a robot” check.").waitFor();
    expect(stored().secret).toBe("0x4AAAAAAAsecret");
    await expectAccessible(page, "a form with a captcha");
    // Off again, for the rest of the tests.
    await page.getByLabel("Captcha", { exact: true }).selectOption("");
    await page.getByRole("button", { name: "Save form" }).click();
    await until(async () => (await server.api(`/forms/${formId}`)).data.form.settings.captcha == null);
    expect(errors).toEqual([]);
  }, 30_000);

  test("Settings: account limits, the opt-out reply changed, a backup run and downloaded, the scheduled ones listed", async () => {
    await nav(page, "Settings").click();
    await page.getByRole("heading", { level: 1, name: "Settings" }).waitFor();
    const settingsPage = (name: string) => page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name, exact: true });
    await page.getByRole("link", { name: "Developers", exact: true }).click();
    const account = (await server.api("/account")).data;
    const n = (x: number) => x.toLocaleString("en-US");
    await page.getByTestId("api-limits").getByText(`${n(account.limits.apiRequestsPerHour)} requests an hour, at most ${n(account.limits.apiBurstPerMinute)} in a minute`).waitFor();
    await settingsPage("Phones and sending limits").click();
    const limits = page.getByTestId("account-limits");
    const used = account.usage.messages;
    expect(used).toBeGreaterThanOrEqual(2);
    await limits.getByText(`${used} (no monthly limit)`, { exact: true }).waitFor();
    // The operator, who runs the server, is shown the command that changes the account's limits,
    // as this server runs commands (from the project folder: npx).
    await page.getByText(/You run this server: change these on it with npx textwire accounts update/).waitFor();

    await settingsPage("Business").click();
    await page.getByLabel("Reply to STOP (opt-out)").fill("No more texts from {{accountName}}. Text START to undo.");
    await page.getByRole("button", { name: "Save replies" }).click();
    await page.getByText("Replies saved.").waitFor();
    await settingsPage("Texting rules").click();
    await page.getByLabel("Words that stop all texts").fill("STOP, QUIT, ENOUGH");
    await page.getByRole("button", { name: "Save words" }).click();
    await page.getByText("Words saved.").waitFor();
    const settings = (await server.api("/account/settings")).data.settings;
    expect(settings.optOutReply).toBe("No more texts from {{accountName}}. Text START to undo.");
    expect(settings.optOutKeywords).toEqual(["STOP", "QUIT", "ENOUGH"]);

    await settingsPage("Server").click();
    const table = page.getByTestId("scheduled-backups");
    await table.getByText(SCHEDULED).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Run a backup now and download" }).click()]);
    expect(download.suggestedFilename()).toMatch(/^textwire-\d{8}T\d{6}Z\.db$/);
    const file = join(backupDir, "..", `downloaded-${Date.now()}.db`);
    await download.saveAs(file);
    try {
      expect(readFileSync(file).subarray(0, 16).toString("latin1")).toBe("SQLite format 3\0");
      const copy = new Database(file, { readonly: true });
      expect((copy.query("SELECT count(*) AS n FROM forms").get() as { n: number }).n).toBeGreaterThanOrEqual(1);
      copy.close();
    } finally {
      rmSync(file, { force: true });
    }
    await page.getByText(/^Backup textwire-.*downloaded/).waitFor();
    await expectAccessible(page, "Settings (operator)");
    await screenshot(page, "settings-1280");
    expect(errors).toEqual([]);
  }, 40_000);

  test("a new form: the account's home country arriving late fills only the country list, never what was already typed", async () => {
    let release!: () => void;
    const late = new Promise<void>((r) => (release = r));
    await page.route("**/v1/account", async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.data.account.defaultCountry = "GB";
      await late;
      await route.fulfill({ response: res, json: body });
    });
    try {
      // A fresh page load: the home country is asked for again (it is kept per page).
      await page.goto(`${server.url}/forms/new`);
      await page.getByRole("heading", { level: 1, name: "Forms: new form" }).waitFor();
      const perVisitor = page.getByLabel("Submissions per visitor per minute");
      await perVisitor.fill("25");
      release();
      const countries = page.getByLabel("Phone numbers only from (country codes)");
      for (const end = Date.now() + 5_000; (await countries.inputValue()) !== "GB" && Date.now() < end; ) await Bun.sleep(25);
      expect(await countries.inputValue()).toBe("GB");
      expect(await perVisitor.inputValue()).toBe("25");
    } finally {
      await page.unroute("**/v1/account");
    }
  });

  test("an admin key that is not an operator's sees no backup button, and is told who makes backups", async () => {
    const key = (await server.api("/api-keys", { method: "POST", json: { permission: "admin_access" } })).data.apiKey;
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US" });
    try {
      const p2 = await other.newPage();
      const errs = watchErrors(p2);
      await signIn(p2, key);
      await nav(p2, "Settings").click();
      await p2.getByRole("heading", { level: 1, name: "Settings" }).waitFor();
      await p2.getByText(/Backups are made by whoever runs the Textwire server/).waitFor();
      expect(await p2.getByRole("button", { name: /backup/i }).count()).toBe(0);
      expect(await p2.getByTestId("scheduled-backups").count()).toBe(0);
      expect(await p2.getByRole("link", { name: "Server", exact: true }).count()).toBe(0);
      // No command line for someone who does not run the server: plain words instead.
      await p2.getByRole("link", { name: "Phones and sending limits", exact: true }).click();
      await p2.getByText("These are set by whoever runs the Textwire server: ask them if you need more.").waitFor();
      expect(await p2.locator("main").textContent()).not.toContain("textwire ");
      await expectAccessible(p2, "Settings (admin, not operator)");
      expect(errs).toEqual([]);
    } finally {
      await other.close();
    }
  }, 30_000);
});

describe("Forms and Settings on a phone, 390 px, dark", () => {
  test("list, builder and Settings fit the screen and pass axe", async () => {
    const context = await openContext(browser, PHONE);
    try {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await signIn(page, server.adminKey);
      const pages: Array<[string, string, RegExp]> = [
        ["forms-list-390", "/forms", /^Forms$/],
        ["forms-builder-390", "/forms/new", /Forms: new form/],
        ["settings-390", "/settings/server", /^Server$/],
      ];
      for (const [name, path, heading] of pages) {
        await page.goto(`${server.url}${path}`);
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        if (name === "settings-390") await page.getByTestId("scheduled-backups").waitFor();
        if (name === "forms-list-390") await page.locator("tr[data-form-id]").first().waitFor();
        expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
        await expectAccessible(page, `${name}`);
        await screenshot(page, name);
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 45_000);
});
