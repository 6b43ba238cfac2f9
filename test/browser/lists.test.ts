import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import ExcelJS from "exceljs";
import { launchBrowser, screenshot, startServerProcess, watchErrors, type ServerProcess, expectAccessible, openContext, signIn as signInAt, DESKTOP, PHONE } from "./browser";

/**
 * Messages and Contacts in a real browser: the Messages filters kept in the URL, a
 * message's timeline after a lease and a failure, an Excel import through the mapping step, an
 * export with chosen columns; axe-core and screenshots of each page at 1280 and 390 px.
 */
let server: ServerProcess;
let browser: Browser;
let formA: string;
let formB: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  const make = async (name: string) =>
    (
      await server.api("/forms", {
        method: "POST",
        json: { name, messageTemplate: `Hi {{firstName}}, thanks from ${name}!`, fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "UTC" } },
      })
    ).data.form.id as string;
  [formA, formB] = [await make("Spring sale"), await make("Repairs")];
  const submit = async (formId: string, phoneNumber: string, firstName: string) => {
    const res = await fetch(`${server.url}/v1/forms/${formId}/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ phoneNumber, firstName }),
    });
    if (res.status !== 200) throw new Error(`webhook: ${res.status} ${await res.text()}`);
    return ((await res.json()) as any).data.messageId as string;
  };
  ids.grace = await submit(formA, "+14155550142", "Grace");
  ids.alan = await submit(formA, "+14155550143", "Alan");
  ids.linus = await submit(formB, "+14155550144", "Linus");
  // Grace's text: handed to a phone, which reports a permanent failure (a wrong number is not tried again).
  const leased = await server.api("/messages/next", { method: "POST", json: { limit: 3, deviceId: "counter-phone" } });
  const grace = leased.data.messages.find((m: any) => m.id === ids.grace);
  await server.api(`/messages/${ids.grace}/status`, { method: "PUT", json: { status: "failed", failureReason: "invalid-phone", leaseToken: grace.leaseToken } });
  for (const m of leased.data.messages) {
    if (m.id !== ids.grace) await server.api(`/messages/${m.id}/status`, { method: "PUT", json: { status: "sent", sentAt: new Date().toISOString(), leaseToken: m.leaseToken } });
  }
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const signIn = (page: Page, path: string) => signInAt(page, server.url, server.adminKey, path);


const localDay = (offsetDays = 0) => {
  const d = new Date(Date.now() + offsetDays * 86_400_000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};

async function xlsxFile(rows: unknown[][]): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet("Customers");
  for (const r of rows) ws.addRow(r);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

describe("desktop, 1280 px", () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    context = await openContext(browser, DESKTOP, { acceptDownloads: true });
    page = await context.newPage();
    errors = watchErrors(page);
    await signIn(page, "/messages");
    await page.getByRole("heading", { level: 1, name: /Messages/ }).waitFor();
  }, 30_000);
  afterAll(() => context.close());

  test("Messages filtered by form and dates; the URL keeps the filters across reload and back", async () => {
    const rows = page.locator("tbody tr");
    await page.locator(`tr[data-message-id="${ids.linus}"]`).waitFor();
    await page.getByLabel("Form", { exact: true }).selectOption({ label: "Spring sale" });
    await page.waitForURL(new RegExp(`formId=${formA}`));
    await page.locator(`tr[data-message-id="${ids.linus}"]`).waitFor({ state: "detached" });
    expect(await rows.count()).toBe(2);

    // A range that ended yesterday: nothing; up to today: both again.
    await page.getByLabel("Created from", { exact: true }).fill(localDay(-7));
    await page.waitForURL(/from=/);
    await page.getByLabel("Created until", { exact: true }).fill(localDay(-1));
    await page.waitForURL(/to=/);
    await page.getByText("No messages match these filters.").waitFor();
    await page.getByLabel("Created until", { exact: true }).fill(localDay(0));
    await page.waitForURL(new RegExp(`to=${localDay(0)}`));
    await page.locator(`tr[data-message-id="${ids.grace}"]`).waitFor();
    expect(await rows.count()).toBe(2);

    await page.reload();
    await page.locator(`tr[data-message-id="${ids.alan}"]`).waitFor();
    expect(await rows.count()).toBe(2);
    // The form choices load on their own request, maybe after the rows: wait for the one in the URL.
    const formSelect = page.getByLabel("Form", { exact: true });
    await formSelect.locator(`option[value="${formA}"]`).waitFor({ state: "attached" });
    for (let i = 0; i < 50 && (await formSelect.inputValue()) !== formA; i++) await Bun.sleep(20);
    expect(await formSelect.inputValue()).toBe(formA);
    expect(await page.getByLabel("Created from", { exact: true }).inputValue()).toBe(localDay(-7));
    expect(await page.getByLabel("Created until", { exact: true }).inputValue()).toBe(localDay(0));
    await page.getByLabel("Status", { exact: true }).selectOption("failed");
    await page.waitForURL(/status=failed/);
    await page.locator(`tr[data-message-id="${ids.alan}"]`).waitFor({ state: "detached" });
    expect(await rows.count()).toBe(1);
    // Into a message and back: the list is as it was left.
    await page.locator(`tr[data-message-id="${ids.grace}"]`).getByRole("link").click();
    await page.getByTestId("message-timeline").waitFor();
    await page.goBack();
    await page.locator(`tr[data-message-id="${ids.grace}"]`).waitFor();
    expect(await rows.count()).toBe(1);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ formId: formA, from: localDay(-7), to: localDay(0), status: "failed" });
    await page.getByLabel("Status", { exact: true }).selectOption("");
    await page.locator(`tr[data-message-id="${ids.alan}"]`).waitFor();

    // The contact filter: found by name, shown by name, cleared with its button.
    await page.getByLabel("Contact", { exact: true }).fill("Ala");
    await page.locator("#f-contact-found option").first().waitFor({ state: "attached" });
    await page.getByLabel("Contact", { exact: true }).fill(await page.locator("#f-contact-found option").first().getAttribute("value") as string);
    await page.waitForURL(/contactId=/);
    await page.locator(`tr[data-message-id="${ids.grace}"]`).waitFor({ state: "detached" });
    expect(await rows.count()).toBe(1);
    await expectAccessible(page, "Messages with filters");
    await screenshot(page, "messages-filters-1280");
    await page.getByRole("button", { name: "Show messages to every contact" }).click();
    await page.locator(`tr[data-message-id="${ids.grace}"]`).waitFor();
    // From a contact's page to the Messages page filtered to that contact.
    const alan = (await server.api("/contacts?search=Alan")).data.contacts[0].id;
    await page.goto(`${server.url}/contacts/${alan}`);
    await page.getByRole("link", { name: "Texts to Alan on the Messages page" }).click();
    await page.waitForURL(new RegExp(`/messages\\?contactId=${alan}$`));
    await page.locator(`tr[data-message-id="${ids.alan}"]`).waitFor();
    expect(await rows.count()).toBe(1);
    await page.getByText("Alan (+14155550143)").waitFor();
    await page.getByRole("button", { name: "Show messages to every contact" }).click();
    await page.locator(`tr[data-message-id="${ids.grace}"]`).waitFor();
    expect(errors).toEqual([]);
  }, 45_000);

  test("a message's detail shows its timeline: the lease with its phone and expiry, the failure, the owner's retry", async () => {
    await page.goto(`${server.url}/messages/${ids.grace}`);
    await page.getByRole("heading", { level: 1, name: /Messages/ }).waitFor();
    const timeline = page.getByTestId("message-timeline");
    await timeline.locator("li").first().waitFor();
    expect(await timeline.locator("li").evaluateAll((els) => els.map((e) => e.getAttribute("data-kind")))).toEqual(["created", "leased", "failed"]);
    expect(await timeline.locator('li[data-kind="leased"]').textContent()).toContain("Handed to the phone “counter-phone” to send, to report back by");
    expect(await timeline.locator('li[data-kind="failed"]').textContent()).toContain("Failed for good: The phone number is not a mobile number that can receive texts. Code: invalid-phone");
    expect(await page.locator(".facts").textContent()).toContain("counter-phone");
    await expectAccessible(page, "a failed message");
    await screenshot(page, "message-detail-1280");

    await page.getByRole("button", { name: "Retry" }).click();
    await timeline.locator('li[data-kind="attempt_failed"]').waitFor();
    expect(await timeline.locator('li[data-kind="attempt_failed"]').textContent()).toContain("Sending failed: The phone number is not a mobile number that can receive texts. You sent it again");
    expect(await page.locator(".facts").textContent()).toContain("queued");
    expect(errors).toEqual([]);
  }, 30_000);

  test("an Excel file goes through the column-mapping step and its preview, then is imported", async () => {
    await page.goto(`${server.url}/contacts/import`);
    await page.getByRole("heading", { level: 1, name: "Contacts: import" }).waitFor();
    const buffer = await xlsxFile([
      ["Mobile", "Given name", "Shop", "Ignore me"],
      ["+14155550201", "Hedy", "Lamarr Labs", "x"],
      [14155550202, "Katherine", "NASA", "y"],
      ["not a phone", "Nobody", "", "z"],
    ]);
    await page.getByLabel("CSV or Excel file").setInputFiles({ name: "customers.xlsx", mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", buffer });
    await page.getByRole("heading", { name: "1. Which column is which" }).waitFor();
    await page.getByLabel("Import column Mobile as").selectOption("phoneNumber");
    await page.getByLabel("Import column Given name as").selectOption("firstName");
    await page.getByLabel("Import column Shop as").selectOption("customFields.Shop");
    await page.getByLabel("Import column Ignore me as").selectOption("");
    const preview = page.getByTestId("import-preview");
    expect(await preview.locator("thead th").allTextContents()).toEqual(["Phone number", "First name", "Custom field Shop"]);
    expect(await preview.locator("tbody tr").first().locator("td").allTextContents()).toEqual(["+14155550201", "Hedy", "Lamarr Labs"]);
    expect(await preview.locator("tbody tr").nth(1).locator("td").first().textContent()).toBe("14155550202");
    await page.getByRole("list", { name: "Rows that will be refused" }).getByText(/^Row 4: /).waitFor();
    await page.getByText(/2 to add, 0 to update, 1 row\(s\) will be refused/).waitFor();
    await expectAccessible(page, "import mapping (Excel)");
    await screenshot(page, "contacts-import-1280");
    await page.getByRole("button", { name: "Import contacts" }).click();
    await page.getByText(/Imported: 2 added, 0 updated, 1 row\(s\) refused/).waitFor();
    const found = await server.api("/contacts?search=Hedy");
    const hedy = await server.api(`/contacts/${found.data.contacts[0].id}`);
    expect(hedy.data.contact).toMatchObject({ phoneNumber: "+14155550201", firstName: "Hedy", customFields: { Shop: "Lamarr Labs" } });
    expect(errors).toEqual([]);
  }, 30_000);

  test("a file that is not a workbook is refused in plain words before anything is sent", async () => {
    await page.goto(`${server.url}/contacts/import`);
    await page.getByLabel("CSV or Excel file").setInputFiles({ name: "broken.xlsx", mimeType: "application/octet-stream", buffer: Buffer.from("this is not a zip file") });
    await page.getByRole("alert").getByText("This file is not an Excel workbook (.xlsx)").waitFor();
    expect(errors).toEqual([]);
  }, 20_000);

  test("export: the list's filters are kept, the format and the columns are chosen", async () => {
    await page.goto(`${server.url}/contacts?search=Hedy`);
    await page.getByRole("heading", { level: 1, name: /Contacts/ }).waitFor();
    await expectAccessible(page, "Contacts list");
    await screenshot(page, "contacts-list-1280");
    await page.getByRole("link", { name: "Export contacts" }).click();
    await page.getByRole("heading", { level: 1, name: "Contacts: export" }).waitFor();
    await page.getByText("Only those matching “Hedy” (as in the list)").waitFor();
    await page.getByLabel("CSV (.csv)").check();
    for (const f of ["Last name", "E-mail", "Status", "Tags"]) await page.getByLabel(f, { exact: true }).uncheck();
    await page.getByLabel("Custom fields (every one)").uncheck();
    await expectAccessible(page, "Contacts export");
    await screenshot(page, "contacts-export-1280");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download the file" }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
    const text = (await Bun.file((await download.path())!).text()).replace(/^\uFEFF/, "");
    expect(text.trim().split(/\r?\n/)).toEqual(["firstName,phoneNumber", "Hedy,+14155550201"]);

    // Every contact, as JSON, every column.
    await page.getByLabel("Every contact").check();
    await page.getByLabel("JSON (for other programs)").check();
    await page.getByRole("button", { name: "Choose all" }).click();
    const href = await page.getByRole("link", { name: "Download the file" }).getAttribute("href");
    const q = new URL(href!, server.url).searchParams;
    expect(q.get("format")).toBe("json");
    expect(q.get("search")).toBeNull();
    expect(q.get("fields")!.split(",")).toContain("optedOut");
    await page.getByRole("button", { name: "Choose all" }).click();
    expect(errors).toEqual([]);
  }, 30_000);
});

describe("phone, 390 px", () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    context = await openContext(browser, PHONE, { colorScheme: "light" });
    page = await context.newPage();
    errors = watchErrors(page);
    await signIn(page, "/messages");
    await page.getByRole("heading", { level: 1, name: /Messages/ }).waitFor();
  }, 30_000);
  afterAll(() => context.close());

  test("Messages (filtered list, detail) and Contacts (list, import, export) fit a phone and pass axe", async () => {
    await page.goto(`${server.url}/messages?formId=${formA}&from=${localDay(-7)}&to=${localDay(0)}`);
    await page.locator(`tr[data-message-id="${ids.alan}"]`).waitFor();
    await expectAccessible(page, "Messages (390)");
    await screenshot(page, "messages-filters-390");
    await page.goto(`${server.url}/messages/${ids.grace}`);
    await page.getByTestId("message-timeline").locator("li").nth(2).waitFor();
    await expectAccessible(page, "message detail (390)");
    await screenshot(page, "message-detail-390");
    await page.goto(`${server.url}/contacts`);
    await page.locator("tbody tr").first().waitFor();
    await expectAccessible(page, "Contacts (390)");
    await screenshot(page, "contacts-list-390");
    await page.goto(`${server.url}/contacts/import`);
    await page
      .getByLabel("CSV or Excel file")
      .setInputFiles({ name: "more.xlsx", mimeType: "application/octet-stream", buffer: await xlsxFile([["Phone", "First name", "Notes"], ["+14155550301", "Ida", "Met at the market"]]) });
    await page.getByTestId("import-preview").waitFor();
    await expectAccessible(page, "import (390)");
    await screenshot(page, "contacts-import-390");
    await page.goto(`${server.url}/contacts/export?status=new`);
    await page.getByRole("heading", { level: 1, name: "Contacts: export" }).waitFor();
    await expectAccessible(page, "export (390)");
    await screenshot(page, "contacts-export-390");
    // Nothing is wider than the screen (tables scroll inside their own box).
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
  }, 45_000);
});
