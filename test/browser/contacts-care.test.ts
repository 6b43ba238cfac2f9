import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, PHONE, expectAccessible, launchBrowser, openContext, screenshot, sidewaysOverflow, signIn, startServerProcess, watchErrors, type ServerProcess } from "./browser";

/**
 * Contact care in a real browser, by roles and names (docs/contacts.md): "Add contact" creates
 * one; the contact page's "Opt out" with a reason opts out (a website form post to that number then
 * queues nothing); "Delete contact" asks and deletes; a selection is changed at once after a
 * confirmation naming the count; at 390 px nothing scrolls sideways.
 */
let server: ServerProcess;
let browser: Browser;
let formKey: string;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServerProcess(), launchBrowser()]);
  const form = await server.api("/forms", {
    method: "POST",
    json: { name: "Quote", messageTemplate: "Hi {{firstName}}, thanks!", fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "UTC" } },
  });
  formKey = form.data.form.id;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const contactByPhone = async (phone: string) => (await server.api(`/contacts?search=${encodeURIComponent(phone.replace(/\D/g, "").slice(-7))}`)).data.contacts.find((c: any) => c.phoneNumber === phone);
const webhook = (phone: string) =>
  fetch(`${server.url}/v1/forms/${formKey}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone }) });

async function addContact(page: Page, name: string, phone: string) {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Contacts", exact: true }).click();
  await page.getByRole("heading", { level: 1, name: "Contacts" }).waitFor();
  await page.getByRole("button", { name: "Add contact" }).click();
  await page.getByRole("heading", { level: 1, name: "Contacts: add a contact" }).waitFor();
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel("Phone number").fill(phone);
}

test("Add contact → edit → Opt out with a reason (the form then queues nothing) → Opt back in → Delete contact asks and deletes", async () => {
  const ctx = await openContext(browser, DESKTOP);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await signIn(page, server.url, server.adminKey, "/contacts");
  await page.getByRole("heading", { level: 1, name: "Contacts" }).waitFor();

  // Add contact: the phone as a person types it is stored as E.164; consent manual, who added it.
  await addContact(page, "Ann Lee", "(415) 555-0177");
  await page.getByLabel("E-mail").fill("ann@example.com");
  await page.getByLabel("Tags").fill("vip, walk-in");
  await page.getByLabel("Notes").fill("Prefers mornings");
  await page.getByLabel("Time zone (leave empty for the form's)").fill("europe/london");
  await page.getByRole("button", { name: "Add a detail" }).click();
  await page.getByLabel("What (detail 1)").fill("Dog");
  await page.getByLabel("Value (detail 1)").fill("Rex");
  await expectAccessible(page, "add a contact");
  await page.getByRole("button", { name: "Add contact" }).click();
  await page.getByRole("heading", { level: 1, name: "Contacts: Ann Lee" }).waitFor();
  const ann = await contactByPhone("+14155550177");
  const stored = (await server.api(`/contacts/${ann.id}`)).data.contact;
  expect(stored).toMatchObject({ firstName: "Ann", lastName: "Lee", email: "ann@example.com", tags: ["vip", "walk-in"], notes: "Prefers mornings", customFields: { Dog: "Rex" }, timeZone: "Europe/London" });
  await page.getByText("Europe/London (quiet hours and reminders follow it)").waitFor();
  expect(stored.consent).toMatchObject({ source: "manual", by: { type: "key" } });

  // A second contact; giving it Ann's number says who has it, with a link.
  await addContact(page, "Bob", "415 555 0178");
  await page.getByRole("button", { name: "Add contact" }).click();
  await page.getByRole("heading", { level: 1, name: "Contacts: Bob" }).waitFor();
  await page.getByLabel("Phone number").fill("+1 415 555 0177");
  await page.getByLabel("Name", { exact: true }).fill("Bob Stone");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByRole("alert").filter({ hasText: "Another contact already has this phone number" }).getByRole("link", { name: "Ann Lee" }).waitFor();
  expect((await contactByPhone("+14155550178")).firstName).toBe("Bob");
  // A time zone the browser's list does not hold is refused under its field, in its own name.
  await page.getByLabel("Phone number").fill("+1 415 555 0179");
  await page.getByLabel("Time zone (leave empty for the form's)").fill("Mars/Base");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Time zone must be an IANA time zone name such as Europe/London").waitFor();
  await page.getByLabel("Time zone (leave empty for the form's)").fill("");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Bob Stone: changes saved.").waitFor();
  expect(await contactByPhone("+14155550179")).toMatchObject({ firstName: "Bob", lastName: "Stone" });

  // Ann's page: Opt out with a reason. A text from a form is waiting for her: it is cancelled.
  expect((await webhook("415-555-0177")).status).toBe(200);
  const waiting = (await server.api(`/messages?status=queued&limit=100`)).data.messages.filter((m: any) => m.recipientPhone === "+14155550177");
  expect(waiting).toHaveLength(1);
  await page.goto(`${server.url}/contacts/${ann.id}`);
  await page.getByRole("heading", { level: 1, name: "Contacts: Ann Lee" }).waitFor();
  await page.getByLabel("Reason").fill("Phoned the shop: please stop texting");
  await page.getByRole("button", { name: "Opt out" }).click();
  await page.getByText("Ann Lee opted out: no more texts are sent to (415) 555-0177.").waitFor();
  await page.getByRole("listitem").filter({ hasText: "“Phoned the shop: please stop texting”" }).waitFor();
  expect((await server.api(`/contacts/${ann.id}`)).data.contact.optedOut).toBe(true);
  expect((await server.api(`/messages/${waiting[0].id}`)).data.message.status).toBe("cancelled");
  const hist = (await server.api(`/contacts/${ann.id}/consent-history`)).data.entries;
  expect(hist[0]).toMatchObject({ action: "opted_out", source: "manual", reason: "Phoned the shop: please stop texting", by: { type: "key" } });
  // A website form post to that number queues nothing.
  const posted = await webhook("(415) 555-0177");
  expect(posted.status).toBe(200);
  const queued = (await server.api(`/messages?status=queued&limit=100`)).data.messages.filter((m: any) => m.recipientPhone === "+14155550177");
  expect(queued).toEqual([]);
  await expectAccessible(page, "an opted-out contact");

  // Opting back in needs the reason.
  await page.getByRole("button", { name: "Opt back in" }).click();
  await page.getByRole("alert").filter({ hasText: "why this person may be texted again" }).waitFor();
  expect((await server.api(`/contacts/${ann.id}`)).data.contact.optedOut).toBe(true);
  await page.getByLabel("Reason").fill("Asked in the shop to get reminders again");
  await page.getByRole("button", { name: "Opt back in" }).click();
  await page.getByText("Ann Lee opted back in: texts are allowed again.").waitFor();
  expect((await server.api(`/contacts/${ann.id}`)).data.contact.optedOut).toBe(false);

  // Delete contact: it asks, naming what goes with it; "Keep it" keeps it; then it deletes.
  await page.getByRole("button", { name: "Delete contact" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete Ann Lee?" });
  await dialog.waitFor();
  expect(await dialog.textContent()).toContain("Their 1 text (sent and received) and their conversation are deleted with them.");
  await expectAccessible(page, "the delete dialog");
  await dialog.getByRole("button", { name: "Keep it" }).click();
  await dialog.waitFor({ state: "hidden" });
  expect((await server.api(`/contacts/${ann.id}`)).data.contact.id).toBe(ann.id);
  await page.getByRole("button", { name: "Delete contact" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete contact" }).click();
  await page.getByRole("heading", { level: 1, name: "Contacts" }).waitFor();
  await page.getByText("Ann Lee deleted, with their texts and conversation.").waitFor();
  expect(await contactByPhone("+14155550177")).toBeUndefined();
  expect(errors).toEqual([]);
  await ctx.close();
}, 90_000);

test("a selection: tag, status, opt out and delete, each confirmed with the count", async () => {
  const ids: string[] = [];
  for (const [i, name] of ["Cara", "Dan", "Eve"].entries()) {
    ids.push((await server.api("/contacts", { method: "POST", json: { phoneNumber: `+1415555028${i}`, firstName: name, tags: ["bulk-test"] } })).data.contact.id);
  }
  const ctx = await openContext(browser, DESKTOP);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await signIn(page, server.url, server.adminKey, "/contacts");
  await page.getByRole("heading", { level: 1, name: "Contacts" }).waitFor();
  await page.goto(`${server.url}/contacts?tags=bulk-test`);
  await page.getByText("3 contact(s)").waitFor();
  await page.locator(`tr[data-contact-id="${ids[0]}"]`).waitFor();
  for (const name of ["Cara", "Dan", "Eve"]) await page.getByLabel(`Select ${name}`).check();
  await page.getByText("3 contacts selected").waitFor();

  await page.getByLabel("Tag to add").fill("spring");
  await page.getByRole("button", { name: "Add tag" }).click();
  await page.getByRole("dialog", { name: "Add the tag “spring” to 3 contacts?" }).getByRole("button", { name: "Tag 3 contacts" }).click();
  await page.getByText("3 contacts tagged.").waitFor();
  for (const id of ids) expect((await server.api(`/contacts/${id}`)).data.contact.tags).toEqual(["bulk-test", "spring"]);

  for (const name of ["Cara", "Dan"]) await page.getByLabel(`Select ${name}`).check();
  await page.getByLabel("New status").selectOption("converted");
  await page.getByRole("button", { name: "Set status" }).click();
  await page.getByRole("dialog", { name: "Set 2 contacts to converted?" }).getByRole("button", { name: "Set 2 contacts to converted" }).click();
  await page.getByText("2 contacts set to converted.").waitFor();
  expect((await server.api(`/contacts/${ids[2]}`)).data.contact.status).toBe("new");

  await page.getByLabel("Select all contacts on this page").check();
  await page.getByLabel("Reason for opting out (optional)").fill("Shop closed for the winter");
  await page.getByRole("button", { name: "Opt out" }).click();
  const optOut = page.getByRole("dialog", { name: "Opt out 3 contacts?" });
  await optOut.waitFor();
  await expectAccessible(page, "the bulk opt-out dialog");
  await optOut.getByRole("button", { name: "Opt out 3 contacts" }).click();
  await page.getByText("3 contacts opted out.").waitFor();
  expect((await server.api(`/contacts/${ids[1]}/consent-history`)).data.entries[0]).toMatchObject({ reason: "Shop closed for the winter", source: "manual" });

  await page.getByLabel("Select all contacts on this page").check();
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Delete 3 contacts?" });
  await dialog.getByRole("button", { name: "Keep it" }).click();
  expect((await server.api("/contacts?tags=bulk-test")).data.pagination.total).toBe(3);
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await dialog.getByRole("button", { name: "Delete 3 contacts" }).click();
  await page.getByText("3 contacts deleted.").waitFor();
  expect((await server.api("/contacts?tags=bulk-test")).data.pagination.total).toBe(0);
  expect(errors).toEqual([]);
  await ctx.close();
}, 90_000);

test("at 390 px: the same actions, nothing scrolls sideways", async () => {
  const id = (await server.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550290", firstName: "Fernanda-Maximiliana", lastName: "Oyelaran-Whitcombe-Santos", email: "fernanda.maximiliana.whitcombe@example-long-domain.com" } })).data.contact.id;
  const ctx = await openContext(browser, PHONE);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await signIn(page, server.url, server.adminKey, "/contacts");
  await page.locator(`tr[data-contact-id="${id}"]`).waitFor();
  await page.getByLabel("Select Fernanda-Maximiliana Oyelaran-Whitcombe-Santos").check();
  for (const name of ["Add tag", "Set status", "Opt out"]) await page.getByRole("button", { name, exact: true }).waitFor();
  await page.getByRole("button", { name: "Delete", exact: true }).waitFor();
  expect(await sidewaysOverflow(page, 390)).toEqual([]);
  await screenshot(page, "contacts-selection-390");
  await page.getByRole("button", { name: "Add contact" }).click();
  await page.getByRole("heading", { level: 1, name: "Contacts: add a contact" }).waitFor();
  await page.getByLabel("Phone number").waitFor();
  expect(await sidewaysOverflow(page, 390)).toEqual([]);
  await page.goto(`${server.url}/contacts/${id}`);
  await page.getByRole("button", { name: "Opt out" }).waitFor();
  await page.getByRole("button", { name: "Delete contact" }).waitFor();
  await page.getByRole("button", { name: "Save changes" }).waitFor();
  expect(await sidewaysOverflow(page, 390)).toEqual([]);
  await expectAccessible(page, "a contact's page at 390 px");
  await screenshot(page, "contact-care-390");
  expect(errors).toEqual([]);
  await ctx.close();
}, 60_000);
