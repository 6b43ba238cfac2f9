import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, screenshot, startServerProcess, watchErrors, type ServerProcess, expectAccessible, openContext, signIn as signInAt, DESKTOP, PHONE } from "./browser";

/**
 * The dashboard in a real browser against a real server process: sign-in, navigation, the live
 * Messages page, retry, a revoked key ending the session; axe-core on every page and a
 * screenshot of each at 1280 and 390 px (test-output/screens/).
 */
const NAV = ["Overview", "Forms", "Messages", "Conversations", "Contacts", "Broadcasts", "Automations", "Devices", "Settings"];

let server: ServerProcess;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function signIn(page: Page, key: string) {
  await signInAt(page, server.url, key, "/overview");
  await page.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
}


describe("desktop, 1280 px", () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    context = await openContext(browser, DESKTOP);
    page = await context.newPage();
    errors = watchErrors(page);
  });
  afterAll(() => context.close());

  test("a wrong key is refused in plain words; the right one signs in and lands on the page asked for", async () => {
    await page.goto(`${server.url}/messages`);
    await page.waitForURL(/\/sign-in\?next=%2Fmessages$/);
    await page.getByLabel("E-mail").waitFor();
    await expectAccessible(page, "sign-in");
    await screenshot(page, "sign-in-1280");
    // Keys are the advanced way in (people sign in with e-mail and password).
    await page.getByRole("link", { name: "Sign in with an API key" }).click();
    await page.getByLabel("API key").fill("txwire_sk_" + "x".repeat(40));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("not valid");
    await page.getByLabel("API key").fill(server.adminKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: /Messages/ }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/messages");
    // The cookie is HttpOnly: the page's script cannot read it.
    expect(await page.evaluate("document.cookie")).toBe("");
  }, 30_000);

  test("every navigation link opens its page, whose main heading has its name; back and reload work; axe finds nothing serious", async () => {
    for (const name of NAV) {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true }).click();
      await page.getByRole("heading", { level: 1, name: new RegExp(name) }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/${name.toLowerCase()}`);
      if (name === "Overview") await page.getByText("Last 7 days").waitFor();
      await expectAccessible(page, name);
      await screenshot(page, `${name.toLowerCase()}-1280`);
    }
    await page.goBack();
    await page.getByRole("heading", { level: 1, name: /Devices/ }).waitFor();
    await page.reload();
    await page.getByRole("heading", { level: 1, name: /Devices/ }).waitFor();
    expect(errors).toEqual([]);
  }, 45_000);

  test("a form is built with two fields; the preview counts segments as the template grows; its webhook address is copied", async () => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Forms", exact: true }).click();
    await page.getByRole("link", { name: "New form" }).click();
    await page.getByRole("heading", { level: 1, name: "Forms: new form" }).waitFor();
    await page.getByLabel("Form name").fill("Spring offer");
    await page.getByRole("button", { name: "Add a field" }).click();
    await page.getByLabel("Field 2 name").fill("company");
    await page.getByLabel("Field 2 label").fill("Company");
    await page.getByLabel("Field 2 required").check();
    const figures = page.getByTestId("preview-figures");
    await page.getByLabel("Text message template").fill("Hi {{firstName}} from {{company}}!");
    await figures.getByText(/^1 text \(\d+ characters\)$/).waitFor();
    await page.getByLabel("Text message template").fill("Hi {{firstName}}! " + "Spring deals are here. ".repeat(8));
    await figures.getByText(/^2 texts \(\d+ characters\)$/).waitFor();
    await page.getByLabel("Text message template").fill("Hi {{firstName}} 🌷 see you soon");
    await figures.getByText(/^1 text \(\d+ characters\)$/).waitFor();
    // The why: one text holds 70 characters because of the emoji; the encoding is named only there.
    await page.locator(".preview").getByText("why").click();
    expect(await page.locator(".preview details.why").textContent()).toContain("70 characters because “🌷”");
    expect(await page.locator(".preview details.why").textContent()).toContain("UCS-2");
    await expectAccessible(page, "the form builder");
    await screenshot(page, "form-builder-1280");
    await page.getByRole("button", { name: "Create form" }).click();
    await page.getByRole("heading", { level: 1, name: "Forms: edit Spring offer" }).waitFor();
    const formId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]);
    const saved = await server.api(`/forms/${formId}`);
    expect(saved.data.form.fields.map((f: any) => [f.name, f.required ?? false])).toEqual([["firstName", false], ["company", true]]);
    expect(saved.data.form.settings.duplicateWindowMinutes).toBe(10); // the recommended protections
    await page.getByRole("button", { name: "Copy webhook address" }).click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(saved.data.form.webhookUrl);
    await page.getByLabel("HTML to paste into your page").waitFor();
    await expectAccessible(page, "a form's page");
    await screenshot(page, "form-edit-1280");
    expect(errors).toEqual([]);
  }, 30_000);

  test("a submission appears on Messages without a reload; failed from the API, it is retried from the page", async () => {
    await page.getByRole("link", { name: "Messages", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: /Messages/ }).waitFor();
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    const form = await server.api("/forms", {
      method: "POST",
      json: { name: "Website", messageTemplate: "Hi {{firstName}}, thanks!", fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "UTC" } },
    });
    const res = await fetch(`${server.url}/v1/forms/${form.data.form?.id ?? form.data.formId ?? form.data.id}/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ phoneNumber: "+14155550123", firstName: "Ada" }),
    });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as any;
    const row = page.locator(`tr[data-message-id="${data.messageId}"]`);
    await row.getByText("Hi Ada, thanks!").waitFor({ timeout: 10_000 });
    await row.getByText("queued", { exact: true }).waitFor();

    await server.api(`/messages/${data.messageId}/status`, { method: "PUT", json: { status: "failed", failureReason: "invalid-phone" } });
    await row.getByText("failed", { exact: true }).waitFor({ timeout: 10_000 });
    await expectAccessible(page, "Messages with rows");
    await row.getByRole("button", { name: /Retry/ }).click();
    await row.getByText("queued", { exact: true }).waitFor({ timeout: 10_000 });
    const after = await server.api(`/messages/${data.messageId}`);
    expect(after.data.message.status).toBe("queued");
    // A manual text: the recipient is found by name among the contacts.
    await page.getByText("Write a message").click();
    await page.getByLabel("To (phone number, or search contacts)").fill("Ada");
    const suggested = page.locator("#compose-contacts option").first();
    for (let i = 0; i < 50 && (await suggested.count()) === 0; i++) await Bun.sleep(100);
    expect(await suggested.getAttribute("value")).toBe("+14155550123");
    await page.getByLabel("To (phone number, or search contacts)").fill("+14155550123");
    await page.getByLabel("Text", { exact: true }).fill("Your order is ready for pickup.");
    await page.getByRole("button", { name: "Queue message" }).click();
    await page.locator("tr", { hasText: "Your order is ready for pickup." }).waitFor();
    await screenshot(page, "messages-live-1280");
    expect(errors).toEqual([]);
  }, 30_000);

  test("a contact is found by phone digits; its status and tags change in the table; the list exports to Excel; its page shows the timeline", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Contacts", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: /Contacts/ }).waitFor();
    await page.getByLabel("Search").fill("555 0123");
    await page.waitForURL(/search=555\+0123/);
    const row = page.locator("tr", { hasText: "(415) 555-0123" }); // the home country's numbers as people write them
    await row.waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);
    const contactId = await row.getAttribute("data-contact-id");

    await row.getByLabel(/^Status of Ada/).selectOption("converted");
    await page.getByText("Ada: status saved.").waitFor();
    await row.getByLabel(/^Tags of Ada/).fill("vip, spring, vip");
    await row.getByLabel(/^Tags of Ada/).press("Enter");
    await page.getByText("Ada: tags saved.").waitFor();
    const saved = await server.api(`/contacts/${contactId}`);
    expect(saved.data.contact.status).toBe("converted");
    expect(saved.data.contact.tags).toEqual(["vip", "spring"]);
    await expectAccessible(page, "Contacts with a row");

    await page.getByRole("link", { name: "Export contacts" }).click();
    await page.getByRole("heading", { level: 1, name: "Contacts: export" }).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download the file" }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.xlsx$/);
    const bytes = new Uint8Array(await Bun.file((await download.path())!).arrayBuffer());
    expect(String.fromCharCode(bytes[0], bytes[1])).toBe("PK"); // an XLSX is a zip
    await page.getByRole("link", { name: "← All contacts" }).click();

    await row.getByRole("link", { name: "Ada" }).click();
    await page.getByRole("heading", { level: 1, name: "Contacts: Ada" }).waitFor();
    await page.getByText("Hi Ada, thanks!").waitFor();
    await expectAccessible(page, "a contact's page");
    await screenshot(page, "contact-1280");
    expect(errors).toEqual([]);
  }, 30_000);

  test("a reply from a contact appears in Conversations as unread; the thread is read and answered", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Conversations", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Conversations" }).waitFor();
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    await server.api("/messages/inbound", { method: "POST", json: { from: "+14155550123", body: "Are you open on Sunday?", receivedAt: new Date().toISOString() } });
    const link = page.getByRole("link", { name: /Ada.*1 unread/ });
    await link.waitFor(); // live: no reload
    await expectAccessible(page, "Conversations");
    await screenshot(page, "conversations-list-1280");
    await link.click();
    await page.getByRole("heading", { level: 1, name: "Conversations: Ada" }).waitFor();
    await page.getByText("Are you open on Sunday?").waitFor();
    await page.getByLabel("Reply").fill("Yes, from 10 to 4.");
    await page.getByRole("button", { name: "Send reply" }).click();
    await page.getByText("Reply queued.").waitFor();
    await page.locator(".bubble.outbound", { hasText: "Yes, from 10 to 4." }).waitFor();
    await expectAccessible(page, "a conversation");
    await screenshot(page, "conversation-1280");
    const list = await server.api("/conversations");
    const ada = list.data.conversations.find((c: any) => c.contact.phoneNumber === "+14155550123");
    expect(ada.unreadCount).toBe(0);
    expect(ada.lastMessage.preview).toContain("Yes, from 10 to 4.");
    expect(errors).toEqual([]);
  }, 30_000);

  test("a 5-row CSV is imported through the mapping step, with a preview of the first rows and their problems", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Contacts", exact: true }).click();
    await page.getByRole("link", { name: "Import contacts" }).click();
    await page.getByRole("heading", { level: 1, name: "Contacts: import" }).waitFor();
    const csv = [
      "Cell,Vorname,Nachname,Company,Memo",
      "+14155550201,Grace,Hopper,Navy,x",
      "+14155550202,Alan,Turing,Bletchley,x",
      "+14155550203,Katherine,Johnson,NASA,x",
      "12,Nobody,Wrong,None,x",
      "+14155550205,Margaret,Hamilton,MIT,x",
    ].join("\n");
    await page.getByLabel("CSV or Excel file").setInputFiles({ name: "people.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    // Recognised by name; the rest is the owner's choice.
    expect(await page.getByLabel("Import column Cell as").inputValue()).toBe("phoneNumber");
    expect(await page.getByLabel("Import column Vorname as").inputValue()).toBe("");
    await page.getByLabel("Import column Vorname as").selectOption("firstName");
    await page.getByLabel("Import column Nachname as").selectOption("lastName");
    await page.getByLabel("Import column Company as").selectOption("customFields.Company");
    const preview = page.getByTestId("import-preview");
    await preview.getByRole("columnheader", { name: "Custom field Company" }).waitFor();
    expect(await preview.locator("tbody tr").count()).toBe(5);
    // The whole file is checked by the server (a dry run): the row the import will refuse, and why.
    await page.getByRole("list", { name: "Rows that will be refused" }).getByText(/^Row 5: /).waitFor();
    await page.getByText(/4 to add, 0 to update, 1 row\(s\) will be refused/).waitFor();
    await expectAccessible(page, "the import's mapping step");
    await screenshot(page, "contacts-import-1280");
    await page.getByRole("button", { name: "Import contacts" }).click();
    await page.getByText("Imported: 4 added, 0 updated, 1 row(s) refused.").waitFor();
    const found = await server.api("/contacts?search=Hamilton");
    const margaret = (await server.api(`/contacts/${found.data.contacts[0].id}`)).data.contact;
    expect(margaret.customFields).toEqual({ Company: "MIT" });
    expect(margaret.firstName).toBe("Margaret");
    expect(errors).toEqual([]);
  }, 30_000);

  test("a broadcast's recipient count follows the segment as it is built; it is sent and its progress listed", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Broadcasts", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Broadcasts" }).waitFor();
    await page.getByLabel("Name (for you)").fill("Spring sale");
    await page.getByLabel("Text", { exact: true }).fill("Hi {{firstName}}, the spring sale starts today!");
    const count = page.getByTestId("recipient-count");
    await count.getByText(/^5 recipients/).waitFor(); // Ada and the four imported contacts
    await page.getByLabel("With all these tags").fill("vip");
    await count.getByText(/^1 recipient$/).waitFor();
    await count.getByText("Hi Ada, the spring sale starts today!").waitFor();
    await expectAccessible(page, "the broadcast builder");
    await screenshot(page, "broadcasts-1280");
    // The first click shows what sending will do (test/browser/broadcasts.test.ts); the second sends.
    await page.getByRole("button", { name: "Send broadcast" }).click();
    await page.getByRole("region", { name: "Before you send" }).getByRole("button", { name: "Send to 1 person" }).click();
    await page.getByText("Spring sale: 1 text being queued.").waitFor();
    await page.getByRole("cell", { name: "Spring sale", exact: true }).waitFor();
    await page.getByRole("progressbar", { name: "Progress of Spring sale" }).waitFor();
    const list = await server.api("/broadcasts");
    expect(list.data.broadcasts[0].recipients).toBe(1);
    expect(errors).toEqual([]);
  }, 30_000);

  test("Settings: replication — a bad address is refused in plain words, a folder is saved and reported up to date; the Overview says so", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const folder = `${mkdtempSync(`${tmpdir()}/textwire-dash-replica-`)}/replica`;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("link", { name: "Server", exact: true }).first().click();
    await page.getByRole("heading", { level: 2, name: "Replication" }).waitFor();
    await page.getByText("Replication is off").waitFor();
    await page.getByLabel("Replica address").fill("ftp://example.com/x");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    expect(await page.getByRole("alert").textContent()).toContain("not to ftp://");
    await page.getByLabel("Replica address").fill(`file://${folder}`);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText("Saved. Replication starts now").waitFor();
    await page.getByText("Up to date: every change is copied to").waitFor({ timeout: 20_000 });
    await expectAccessible(page, "Settings with replication");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview", exact: true }).click();
    await page.getByTestId("replication-line").getByText("Up to date").waitFor();
    // Off again, for the tests that follow.
    await server.api("/admin/replication", { method: "PUT", json: { url: null } });
    rmSync(folder.replace(/\/replica$/, ""), { recursive: true, force: true });
    expect(errors).toEqual([]);
  }, 40_000);

  test("Settings: a key is created and shown once; a standard key's session cannot see API keys; revoking the key from the page ends that session", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("link", { name: "Developers", exact: true }).first().click();
    await page.getByRole("heading", { level: 2, name: "API keys" }).waitFor();
    await page.getByLabel("Permission of the new key").selectOption("standard_access");
    await page.getByRole("button", { name: "Create key" }).click();
    const shown = (await page.getByTestId("new-key").textContent())!.trim();
    expect(shown).toMatch(/^txwire_sk_[A-Za-z0-9]{40}$/);
    await page.getByRole("button", { name: "I have stored it" }).click();
    expect(await page.getByText(shown).count()).toBe(0); // shown once: gone from the page
    await page.getByRole("cell", { name: `txwire_sk_…${shown.slice(-4)}`, exact: true }).waitFor();
    await expectAccessible(page, "Settings");
    await screenshot(page, "settings-keys-1280");
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Business", exact: true }).click();
    await page.getByLabel("Reply to STOP (opt-out)").fill("You will get no more texts from {{accountName}}. Reply START to undo.");
    await page.getByRole("button", { name: "Save replies" }).click();
    await page.getByText("Replies saved.").waitFor();
    expect((await server.api("/account/settings")).data.settings.optOutReply).toBe("You will get no more texts from {{accountName}}. Reply START to undo.");

    const other = await openContext(browser, DESKTOP);
    try {
      const p2 = await other.newPage();
      await signIn(p2, shown);
      await p2.getByRole("link", { name: "Settings", exact: true }).click();
      await p2.getByRole("heading", { level: 1, name: "Settings" }).waitFor();
      await p2.getByText("The business's settings are changed by its owners and admins.").waitFor();
      expect(await p2.getByRole("link", { name: "Developers" }).count()).toBe(0);
      await p2.goto(`${server.url}/settings/developers`);
      await p2.getByText("This settings page is not part of your role").waitFor();
      expect(await p2.getByRole("heading", { name: "API keys" }).count()).toBe(0);
      expect(await p2.getByRole("button", { name: "Create key" }).count()).toBe(0);
      await expectAccessible(p2, "Settings for a standard key");

      await page.goto(`${server.url}/settings/developers`);
      await page.getByRole("button", { name: `Revoke key txwire_sk_…${shown.slice(-4)}` }).click();
      const dialog = page.getByRole("dialog", { name: "Revoke this key?" });
      await dialog.waitFor();
      await expectAccessible(page, "the revoke dialog");
      await dialog.getByRole("button", { name: "Revoke key" }).click();
      await page.getByText(/revoked\. Everything using it/).waitFor();

      await p2.getByRole("link", { name: "Overview", exact: true }).click();
      await p2.getByLabel("E-mail").waitFor();
      expect(new URL(p2.url()).pathname).toBe("/sign-in");
      // This page's own session (another key) goes on.
      await page.reload();
      await page.getByRole("heading", { level: 2, name: "API keys" }).waitFor();
    } finally {
      await other.close();
    }
    expect(errors).toEqual([]);
  }, 30_000);

  test("Sign out ends the session", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("E-mail").waitFor();
    await page.goto(`${server.url}/overview`);
    await page.getByLabel("E-mail").waitFor();
  });
});

describe("phone, 390 px", () => {
  test("the navigation opens from Menu; every page fits and passes axe", async () => {
    // Dark, as a phone set to dark mode shows it: axe checks the dark colours' contrast too.
    const context = await openContext(browser, PHONE);
    try {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await page.goto(`${server.url}/sign-in`);
      await screenshot(page, "sign-in-390");
      // Keyboard only: the e-mail field has focus from a Tab; the advanced key link is reached and
      // followed from the keyboard too, and Enter signs in.
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement.id")).toBe("email");
      await page.getByRole("link", { name: "Sign in with an API key" }).focus();
      await page.keyboard.press("Enter");
      await page.getByLabel("API key").focus();
      expect(await page.evaluate("document.activeElement.id")).toBe("api-key");
      await page.keyboard.type(server.adminKey);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { level: 1, name: /Overview/ }).waitFor();
      // The new page has settled once focus moved to its content (which also closes the menu); on a
      // loaded machine that comes a moment after the heading.
      await page.waitForFunction("document.activeElement && document.activeElement.id === \"main\"");
      const nav = page.getByRole("navigation", { name: "Main" });
      // The menu opens from the keyboard and its links are reached with Tab.
      await page.getByRole("button", { name: "Menu" }).focus();
      await page.keyboard.press("Enter");
      await nav.getByRole("link", { name: "Overview", exact: true }).waitFor();
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement.textContent")).toBe("Overview");
      await page.keyboard.press("Escape"); // closes it and gives focus back to Menu
      expect(await nav.isVisible()).toBe(false);
      expect(await page.evaluate("document.activeElement.textContent")).toBe("Menu");
      expect(await nav.isVisible()).toBe(false);
      for (const name of NAV) {
        await page.getByRole("button", { name: "Menu" }).click();
        await nav.getByRole("link", { name, exact: true }).click();
        await page.getByRole("heading", { level: 1, name: new RegExp(name) }).waitFor();
        expect(await nav.isVisible()).toBe(false);
        // Nothing wider than the screen.
        expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
        await expectAccessible(page, `${name} at 390 px`);
        await screenshot(page, `${name.toLowerCase()}-390`);
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 45_000);
});
