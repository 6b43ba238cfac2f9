import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, signIn, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * "Send a test submission" in a real browser (docs/api-decisions.md, "Test submissions" and
 * "Plain words for visitors"): a sample number that belongs to a customer leaves them as they
 * were; a refusal names the field's label; "Also send it to my phone" texts the owner's number as
 * a test linked to no contact; and a website's own error page names the label too. 1280 and
 * 390 px, axe-core, screenshots in test-output/screens/form-test-*.
 */
let server: ServerProcess;
let browser: Browser;
let formId: string;
let webhookUrl: string;
let bobId: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  const form = (
    await server.api("/forms", {
      method: "POST",
      json: {
        name: "Salon bookings",
        messageTemplate: "Hi {{firstName}}, we will call you about {{service}}.",
        fields: [
          { name: "firstName", type: "text", label: "Your name" },
          { name: "service", type: "text", label: "Which service" },
        ],
        settings: { delayMinutes: 0, timezone: "UTC" },
      },
    })
  ).data.form;
  formId = form.id;
  webhookUrl = form.webhookUrl;
  bobId = (await server.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550123", firstName: "Bob" } })).data.contact.id;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const contactCount = async () => (await server.api("/contacts?limit=100")).data.contacts.length;

for (const screen of [
  { name: "1280", options: DESKTOP },
  { name: "390", options: PHONE },
]) {
  describe(`Send a test submission at ${screen.name} px`, () => {
    test("a test with a customer's number leaves them unchanged; a refusal names the label; a test text goes to my phone only", async () => {
      const context = await openContext(browser, screen.options);
      try {
        const page = await context.newPage();
        const errors = watchErrors(page);
        await signIn(page, server.url, server.adminKey, `/forms/${formId}`);
        await page.getByRole("heading", { level: 1, name: /Forms: edit Salon bookings/ }).waitFor();
        const before = await contactCount();
        const section = page.getByRole("region", { name: "Send a test submission" });
        await section.getByLabel("Mobile phone number (sample, never texted)").fill("+1 415 555 0123");
        await section.getByLabel("Your name").fill("Ada");
        await section.getByLabel("Which service").fill("a haircut");
        await section.getByRole("button", { name: "Send a test submission" }).click();
        const outcome = page.getByTestId("test-outcome");
        await outcome.getByText(/no contact was made or changed/).waitFor();
        await outcome.getByText("Hi Ada, we will call you about a haircut.").waitFor();
        // Bob keeps his name; nothing was added.
        expect((await server.api(`/contacts/${bobId}`)).data.contact.firstName).toBe("Bob");
        expect(await contactCount()).toBe(before);
        await expectAccessible(page, "a form's test submission");
        await screenshot(page, `form-test-checked-${screen.name}`);

        await section.getByLabel("Which service").fill("win at evil.example");
        await section.getByRole("button", { name: "Send a test submission" }).click();
        await outcome.getByText("Your website would refuse these values: Please leave links out of 'Which service'.").waitFor();
        expect(await outcome.textContent()).not.toMatch(/\bservice must|phoneNumber/);
        await expectAccessible(page, "a refused test submission");

        await section.getByLabel("Which service").fill("nails");
        await section.getByLabel("Also send it to my phone").check();
        await section.getByLabel("Your phone number").fill("+1 415 555 0177");
        await section.getByRole("button", { name: "Send a test submission" }).click();
        await outcome.getByText(/on its way to \+14155550177/).waitFor();
        const href = await outcome.getByRole("link", { name: "See the test text" }).getAttribute("href");
        const message = (await server.api(`/messages/${decodeURIComponent(href!.split("/")[2])}`)).data.message;
        expect(message).toMatchObject({ contactId: null, recipientPhone: "+14155550177", content: "Hi Ada, we will call you about nails." });
        expect((await server.api(`/contacts/${bobId}`)).data.contact.firstName).toBe("Bob");
        expect(await contactCount()).toBe(before);
        await expectAccessible(page, "a test text sent to my phone");
        await screenshot(page, `form-test-sent-${screen.name}`);
        if (screen.name === "390") expect(await sidewaysOverflow(page, 390)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 60_000);
  });
}

describe("a website form's error page", () => {
  test("names the field's label, not its name, and passes axe at 390 px", async () => {
    const context = await openContext(browser, PHONE);
    try {
      const page = await context.newPage();
      // A plain HTML form on a website, posted by the browser.
      await page.setContent(
        `<form method="post" action="${webhookUrl}"><label>Mobile <input name="phoneNumber" value="+14155550166"></label>` +
          `<label>Which service <input name="service" value="see evil.example/win"></label><button>Send</button></form>`,
      );
      await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send" }).click()]);
      await page.getByRole("heading", { name: "Your message was not sent" }).waitFor();
      const text = (await page.textContent("main")) ?? "";
      expect(text).toContain("Please leave links out of 'Which service'.");
      expect(text).not.toMatch(/\bservice must|phoneNumber/);
      await expectAccessible(page, "the built-in error page");
      await screenshot(page, "form-test-error-page-390");
    } finally {
      await context.close();
    }
  }, 30_000);
});
