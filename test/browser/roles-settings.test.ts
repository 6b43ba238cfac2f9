import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * Each role sees what it can do, and Settings is a few short pages (docs/dashboard.md, "Roles" and
 * "Settings"): a staff member who joined by invitation finds no button they cannot use, never
 * reads the word "key" nor a shell command; an owner's settings pages each fit in three screens at
 * 1280 px, fit a 390 px phone, and pass axe. A used invitation says so before any form.
 */
let server: ServerProcess;
let browser: Browser;
let formId = "";
const PASSWORD = "warm-bread-at-six";

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  await server.api("/account/profile", { method: "PUT", json: { name: "Rosa's Bakery", country: "US", timeZone: "America/Chicago" } });
  const form = await server.api("/forms", {
    method: "POST",
    json: {
      name: "Contact us",
      messageTemplate: "Hi {{firstName}}, thanks! We will call you back.",
      fields: [
        { name: "firstName", type: "text", label: "First name" },
        { name: "message", type: "text", label: "Your question" },
      ],
      settings: { delayMinutes: 0, timezone: "UTC" },
    },
  });
  formId = form.data.form.id;
  const posted = await fetch(`${server.url}/v1/forms/${formId}/webhook`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ phoneNumber: "+14155552671", firstName: "Ann", message: "Do you bake gluten-free bread?" }),
  });
  expect(posted.status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function invitation(role: string): Promise<string> {
  return (await server.api("/invitations", { method: "POST", json: { role } })).data.url.replace(/^http:\/\/[^/]+/, server.url);
}

/** Joins through the invitation page (which names the business and the role first). */
async function join(page: Page, link: string, role: string, email: string) {
  await page.goto(link);
  await page.getByRole("heading", { level: 1, name: "Join Rosa's Bakery on Textwire" }).waitFor();
  expect(await page.getByTestId("invitation-role").textContent()).toContain(`Rosa's Bakery's dashboard as ${role}`);
  await page.getByLabel("Your name").fill(`A ${role}`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Join" }).click();
  await page.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
}

/** What a page says that a person must never read: a key, or a command for the server. */
async function forbiddenWords(page: Page): Promise<string[]> {
  const text = (await page.locator("body").innerText()) + " " + (await page.locator("[aria-label]").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")).join(" ")));
  return [...new Set([...text.matchAll(/\b(keys?|api key|npx textwire|textwire (?:tls|serve|keys|accounts|users|setup-link|restore))\b/gi)].map((m) => m[0]))];
}

/**
 * Buttons on screen that cannot be pressed (a role shown an action it may not take). "Send
 * broadcast" waits for something to send and someone to send it to, whoever you are.
 */
const WAITS_FOR_INPUT = new Set(["Send broadcast"]);
const disabledButtons = async (page: Page) =>
  (await page.locator("button:visible:disabled, fieldset[disabled] button:visible, input[type=checkbox]:visible:disabled:not(fieldset[disabled] *)").evaluateAll((els) => els.map((e) => e.textContent || e.getAttribute("aria-label") || ""))).map((t) => t.trim()).filter((t) => !WAITS_FOR_INPUT.has(t)).length;

describe("a staff member's dashboard", () => {
  for (const [label, screen, width] of [["1280", DESKTOP, 1280], ["390", PHONE, 390]] as const) {
    test(`at ${label} px: only usable actions, no "key", no shell command; forms read-only; broadcasts allowed`, async () => {
      const context = await openContext(browser, screen);
      const page = await context.newPage();
      const errors = watchErrors(page);
      try {
        const link = await invitation("staff");
        await join(page, link, "staff", `staff-${label}@bakery.example`);
        const pages: Array<[string, (p: Page) => Promise<unknown>]> = [
          ["/overview", (p) => p.getByText("Last 7 days").waitFor()],
          ["/forms", (p) => p.getByRole("link", { name: "Contact us" }).waitFor()],
          [`/forms/${formId}`, (p) => p.getByRole("button", { name: "Send a test submission" }).waitFor()],
          ["/messages", (p) => p.locator("tr[data-message-id]").first().waitFor()],
          ["/conversations", (p) => p.getByRole("heading", { level: 1 }).waitFor()],
          ["/contacts", (p) => p.getByRole("link", { name: "Ann" }).first().waitFor()],
          ["/broadcasts", (p) => p.getByRole("button", { name: "Send broadcast" }).waitFor()],
          ["/automations", (p) => p.getByRole("heading", { level: 1, name: "Automations" }).waitFor()],
          ["/devices", (p) => p.getByRole("heading", { level: 1 }).waitFor()],
          ["/settings", (p) => p.getByRole("link", { name: "Your profile" }).waitFor()],
          ["/settings/me", (p) => p.getByRole("heading", { level: 2, name: "Your account" }).waitFor()],
          ["/settings/phones", (p) => p.getByTestId("account-limits").waitFor()],
        ];
        for (const [path, ready] of pages) {
          await page.goto(`${server.url}${path}`);
          await ready(page);
          await page.waitForTimeout(300); // the page's other sections settle
          expect({ path, words: await forbiddenWords(page) }).toEqual({ path, words: [] });
          expect({ path, disabled: await disabledButtons(page) }).toEqual({ path, disabled: 0 });
          expect(await sidewaysOverflow(page, width)).toEqual([]);
          await expectAccessible(page, `${path} for staff at ${label} px`);
        }
        // What staff may not do is not offered at all.
        await page.goto(`${server.url}/forms`);
        await page.getByRole("link", { name: "Contact us" }).waitFor();
        expect(await page.getByRole("link", { name: "New form" }).count()).toBe(0);
        await page.goto(`${server.url}/forms/${formId}`);
        await page.getByRole("button", { name: "Send a test submission" }).waitFor();
        expect(await page.getByRole("button", { name: "Save form" }).count()).toBe(0);
        expect(await page.getByRole("button", { name: "Make a new address" }).count()).toBe(0);
        expect(await page.getByLabel("Form name").isDisabled()).toBe(true);
        await page.goto(`${server.url}/settings`);
        await page.getByRole("link", { name: "Your profile" }).waitFor();
        for (const hidden of ["Business", "People", "Texting rules", "Developers", "Server"]) expect(await page.getByRole("link", { name: hidden, exact: true }).count()).toBe(0);
        // A page of another role, opened by its address, says so instead of failing.
        await page.goto(`${server.url}/settings/developers`);
        await page.getByText("This settings page is not part of your role").waitFor();
        expect(await forbiddenWords(page)).toEqual([]);
        await screenshot(page, `staff-settings-${label}`);

        // The used invitation says so before any form.
        const again = await context.newPage();
        await again.goto(link);
        await again.getByText("This invitation has already been used.").waitFor();
        expect(await again.getByLabel("Your name").count()).toBe(0);
        await expectAccessible(again, `a used invitation at ${label} px`);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 120_000);
  }
});

describe("a viewer's dashboard", () => {
  test("at 1280 px: lists and pages to read, no action offered that a viewer cannot take", async () => {
    const context = await openContext(browser, DESKTOP);
    const page = await context.newPage();
    const errors = watchErrors(page);
    try {
      await join(page, await invitation("viewer"), "a viewer", "viewer@bakery.example");
      const ann = (await server.api("/contacts?search=4155552671")).data.contacts[0].id;
      const pages: Array<[string, (p: Page) => Promise<unknown>]> = [
        ["/messages", (p) => p.locator("tr[data-message-id]").first().waitFor()],
        ["/contacts", (p) => p.getByRole("link", { name: "Ann" }).first().waitFor()],
        [`/contacts/${ann}`, (p) => p.getByRole("heading", { level: 2, name: "Consent history" }).waitFor()],
        [`/conversations/${ann}`, (p) => p.getByRole("link", { name: "Contact page" }).waitFor()],
        ["/broadcasts", (p) => p.getByText("Only an owner, an admin or staff of the account can send broadcasts.").waitFor()],
        ["/forms", (p) => p.getByRole("link", { name: "Contact us" }).waitFor()],
        ["/automations", (p) => p.getByRole("heading", { level: 1, name: "Automations" }).waitFor()],
      ];
      for (const [path, ready] of pages) {
        await page.goto(`${server.url}${path}`);
        await ready(page);
        await page.waitForTimeout(300);
        expect({ path, words: await forbiddenWords(page) }).toEqual({ path, words: [] });
        expect({ path, disabled: await disabledButtons(page) }).toEqual({ path, disabled: 0 });
        for (const action of [/^Retry/, /^Cancel/, "Queue message", "Send reply", "Add contact", "Save changes", "Opt out", "Send broadcast"]) {
          expect({ path, action: String(action), shown: await page.getByRole("button", { name: action }).count() }).toEqual({ path, action: String(action), shown: 0 });
        }
        expect(await page.getByRole("combobox", { name: /^Status of/ }).count()).toBe(0);
        await expectAccessible(page, `${path} for a viewer`);
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});

describe("Settings as short pages (an owner who runs the server)", () => {
  for (const [label, screen, width] of [["1280", DESKTOP, 1280], ["390", PHONE, 390]] as const) {
    test(`at ${label} px: every page fits${label === "1280" ? " in three screens" : " the width"}, passes axe; "key" only on Developers`, async () => {
      const context = await openContext(browser, screen);
      const page = await context.newPage();
      const errors = watchErrors(page);
      try {
        await join(page, await invitation("owner"), "an owner", `owner-${label}@bakery.example`);
        const index = page.locator("ul.settings-index a");
        await page.goto(`${server.url}/settings`);
        await index.first().waitFor();
        expect(await index.allTextContents()).toEqual(["Your profile", "Business", "People", "Phones and sending limits", "Texting rules", "Developers", "Server"]);
        const ready: Record<string, (p: Page) => Promise<unknown>> = {
          me: (p) => p.getByRole("heading", { level: 2, name: "Your account" }).waitFor(),
          business: (p) => p.getByTestId("reply-preview").waitFor(),
          people: (p) => p.getByRole("heading", { level: 2, name: "Signed-in browsers" }).waitFor(),
          phones: (p) => p.getByTestId("account-limits").waitFor(),
          texting: (p) => p.getByLabel("Words that stop all texts").waitFor(),
          developers: (p) => p.getByRole("heading", { level: 2, name: "SMSGate clients" }).waitFor(),
          server: (p) => p.getByTestId("https-status").waitFor(),
        };
        const viewport = screen.viewport!.height;
        const heights: Record<string, number> = {};
        for (const [slug, wait] of Object.entries(ready)) {
          await page.goto(`${server.url}/settings/${slug}`);
          await wait(page);
          await page.waitForTimeout(300);
          const height = (await page.evaluate("document.documentElement.scrollHeight")) as number;
          heights[slug] = height;
          if (label === "1280") expect({ slug, height }).toEqual({ slug, height: Math.min(height, 3 * viewport) });
          expect(await sidewaysOverflow(page, width)).toEqual([]);
          if (slug !== "developers") expect({ slug, words: (await forbiddenWords(page)).filter((w) => !/textwire/i.test(w)) }).toEqual({ slug, words: [] });
          await expectAccessible(page, `settings/${slug} at ${label} px`);
          await screenshot(page, `settings-${slug}-${label}`);
        }
        console.log(`settings pages' heights at ${label} px (screen ${viewport} px):`, JSON.stringify(heights));
        // Old addresses still lead somewhere: an anchor of the one long page opens its new page.
        await page.goto(`${server.url}/settings#backups`);
        await page.waitForURL(/\/settings\/server#backups$/);
        await page.getByRole("heading", { level: 1, name: "Server" }).waitFor();
        await page.goto(`${server.url}/settings#keyword-replies`);
        await page.getByRole("heading", { level: 1, name: "Automations: keyword replies" }).waitFor();
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 120_000);
  }
});
