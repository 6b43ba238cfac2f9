import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";

// 19:00 in New York on Friday 30 October 2026 (EDT); 23:00 in London (GMT), 00:00 in Paris (CET).
const T0 = Date.parse("2026-10-30T23:00:00.000Z");
const clock = { now: T0 };
let s: TestServer;
let quietForm: string;

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => clock.now });
  const form = formBody({
    fields: [{ name: "firstName", type: "text" }],
    settings: { delayMinutes: 0, timezone: "America/New_York", quietHours: { start: "21:00", end: "08:00" } },
  });
  quietForm = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
});
afterAll(() => s.stop());

const submit = (json: Record<string, unknown>, id = quietForm) =>
  fetch(`${s.base}/forms/${id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
const scheduledFor = async (messageId: string) => (await expectStatus(await s.api(`/messages/${messageId}`), 200)).data.message.scheduledFor as string;

describe("contacts' timeZone on the API", () => {
  test("set on create in any case, read back canonical, changed and cleared by PUT", async () => {
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550301", timeZone: "europe/london" } }), 201)).data.contact;
    expect(c.timeZone).toBe("Europe/London");
    expect((await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact.timeZone).toBe("Europe/London");
    const put = (await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { timeZone: "Asia/Tokyo" } }), 200)).data.contact;
    expect(put.timeZone).toBe("Asia/Tokyo");
    expect((await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { timeZone: null } }), 200)).data.contact.timeZone).toBeNull();
    const plain = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550302" } }), 201)).data.contact;
    expect(plain.timeZone).toBeNull();
  });

  test("a zone Intl does not know is a 400 naming timeZone, and changes nothing", async () => {
    for (const bad of ["Mars/Olympus", "+02:00", 42, "x".repeat(80)]) {
      const body = await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550303", timeZone: bad } }), 400);
      expect(body.errors.map((e: any) => e.field)).toContain("timeZone");
    }
    expect((await expectStatus(await s.api("/contacts?search=4155550303"), 200)).data.contacts).toHaveLength(0);
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550304", timeZone: "Europe/Paris" } }), 201)).data.contact;
    const body = await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { timeZone: "Europe/Nowhere" } }), 400);
    expect(body.errors[0].field).toBe("timeZone");
    expect((await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact.timeZone).toBe("Europe/Paris");
  });
});

describe("contacts' timeZone in an import", () => {
  test("a Time Zone column sets, changes and clears the zone; a bad cell is that row's error naming timeZone", async () => {
    const csv = (rows: string) => s.api("/contacts/import", { method: "POST", body: `Phone,Time Zone\n${rows}`, headers: { "Content-Type": "text/csv" } });
    const first = await expectStatus(await csv("+14155550341,asia/tokyo\n+14155550342,Nowhere/Here\n"), 200);
    expect(first.data.created).toBe(1);
    expect(first.data.errors).toEqual([{ row: 3, field: "timeZone", message: expect.stringContaining("IANA") }]);
    const find = async () => (await expectStatus(await s.api("/contacts?search=4155550341"), 200)).data.contacts[0];
    expect((await expectStatus(await s.api(`/contacts/${(await find()).id}`), 200)).data.contact.timeZone).toBe("Asia/Tokyo");
    expect((await expectStatus(await csv("+14155550341,Europe/Paris\n"), 200)).data.updated).toBe(1);
    expect((await expectStatus(await s.api(`/contacts/${(await find()).id}`), 200)).data.contact.timeZone).toBe("Europe/Paris");
    await expectStatus(await csv("+14155550341,\n"), 200);
    expect((await expectStatus(await s.api(`/contacts/${(await find()).id}`), 200)).data.contact.timeZone).toBeNull();
  });
});

describe("quiet hours in the contact's zone", () => {
  test("a contact in London waits for 08:00 London; one without a zone follows the form's (New York, not quiet yet)", async () => {
    await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550311", timeZone: "Europe/London" } }), 201);
    const london = (await expectStatus(await submit({ phoneNumber: "+14155550311" }), 200)).data;
    expect(await scheduledFor(london.messageId)).toBe("2026-10-31T08:00:00.000Z");
    const local = (await expectStatus(await submit({ phoneNumber: "+14155550312" }), 200)).data;
    expect(await scheduledFor(local.messageId)).toBe(new Date(T0).toISOString());
  });

  test("a French number without a zone is guessed to Paris (quiet until 08:00 CET)", async () => {
    const paris = (await expectStatus(await submit({ phoneNumber: "+33612345678" }), 200)).data;
    expect(await scheduledFor(paris.messageId)).toBe("2026-10-31T07:00:00.000Z");
  });
});

describe("automations' sendAt in the contact's zone", () => {
  test("a step at 10:00 goes at 10:00 in Tokyo for a contact there, at 10:00 New York otherwise", async () => {
    clock.now = Date.parse("2026-10-30T14:00:00.000Z"); // 10:00 in New York
    try {
      const form = formBody({ fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "America/New_York" } });
      const fid = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
      const a = (await expectStatus(await s.api("/automations", { method: "POST", json: { name: "Follow-up", formId: fid, steps: [{ template: "How was it?", delay: "1d", sendAt: "10:00" }] } }), 201)).data.automation;
      await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550321", timeZone: "Asia/Tokyo" } }), 201);
      const tokyo = (await expectStatus(await submit({ phoneNumber: "+14155550321" }, fid), 200)).data.contactId;
      const ny = (await expectStatus(await submit({ phoneNumber: "+14155550322" }, fid), 200)).data.contactId;
      const runOf = async (contactId: string) => (await expectStatus(await s.api(`/automations/${a.id}/runs?contactId=${contactId}`), 200)).data.runs[0];
      // Days are calendar days in the contact's zone: submitted Fri 30 Oct 23:00 in Tokyo, so Sat 31 Oct 10:00 JST.
      expect((await runOf(tokyo)).steps[0].scheduledFor).toBe("2026-10-31T01:00:00.000Z");
      // In New York the submission was Fri 10:00: Sat 31 Oct 10:00 EDT.
      expect((await runOf(ny)).steps[0].scheduledFor).toBe("2026-10-31T14:00:00.000Z");
    } finally {
      clock.now = T0;
    }
  });
});

describe("a form field of type timezone", () => {
  test("a valid zone sets the contact's own zone (canonical) and their quiet hours; a bad one is a 400 naming the field", async () => {
    const form = formBody({
      fields: [{ name: "firstName", type: "text" }, { name: "zone", type: "timezone", label: "Your time zone" }],
      settings: { delayMinutes: 0, timezone: "America/New_York", quietHours: { start: "21:00", end: "08:00" } },
    });
    const fid = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
    const ok = (await expectStatus(await submit({ phoneNumber: "+14155550331", zone: "europe/london" }, fid), 200)).data;
    // 23:00 in London: quiet until 08:00 London, though New York's evening is not quiet.
    expect(await scheduledFor(ok.messageId)).toBe("2026-10-31T08:00:00.000Z");
    const c = (await expectStatus(await s.api(`/contacts/${ok.contactId}`), 200)).data.contact;
    expect(c.timeZone).toBe("Europe/London");
    expect(c.customFields.zone).toBe("Europe/London");
    const bad = await expectStatus(await submit({ phoneNumber: "+14155550332", zone: "Atlantis/Deep" }, fid), 400);
    expect(JSON.stringify(bad)).toContain("zone");
    expect(JSON.stringify(bad)).toContain("Your time zone");
    const refused = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ fields: [{ name: "zone", type: "timezone", validation: { format: "x" } }] }) }), 400);
    expect(refused.errors[0].field).toContain("fields[0].validation");
  });
});
