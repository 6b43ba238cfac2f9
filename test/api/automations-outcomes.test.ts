import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { newApiKey } from "../helpers/reads";

/**
 * The counts the dashboard's list of automations shows beside each one: its runs by state, and
 * its stopped runs by reason (how many replied, how many reached a stop status such as
 * converted). docs/api-decisions.md, "Dashboard: Automations".
 */
let s: TestServer;
let standardKey: string;
let formId: string;

beforeAll(async () => {
  s = await startTestServer();
  standardKey = await newApiKey(s, "standard_access");
  const form = formBody({ fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "UTC" } });
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
});
afterAll(() => s.stop());

const submit = (phoneNumber: string) =>
  fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber, firstName: "Ann" }) });
const inbound = (from: string, body: string) =>
  fetch(`${s.base}/messages/${standardKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body }) });

test("the list counts stopped runs by reason: replied, opted out, reached a stop status", async () => {
  const body = { name: "Review request", formId, steps: [{ template: "How did we do, {{firstName}}?", delay: "2d", sendAt: "10:00" }], stopOnStatus: ["converted"] };
  const a = (await expectStatus(await s.api("/automations", { method: "POST", json: body }), 201)).data.automation;
  expect(a.runs).toEqual({ active: 0, completed: 0, stopped: 0, stoppedBy: { replied: 0, "opted-out": 0, status: 0, "contact-deleted": 0, "automation-off": 0, restarted: 0, "stopped-by-hand": 0 } });
  const phones = ["+14155550301", "+14155550302", "+14155550303", "+14155550304", "+14155550305"];
  const contacts: string[] = [];
  for (const p of phones) contacts.push((await expectStatus(await submit(p), 200)).data.contactId);
  await expectStatus(await inbound(phones[0], "Great, thank you"), 201);
  await expectStatus(await inbound(phones[1], "Lovely!"), 201);
  await expectStatus(await inbound(phones[2], "STOP"), 201);
  await expectStatus(await s.api(`/contacts/${contacts[3]}`, { method: "PUT", json: { status: "converted" } }), 200);
  const [listed] = (await expectStatus(await s.api("/automations"), 200)).data.automations.filter((x: any) => x.id === a.id);
  expect(listed.runs).toEqual({ active: 1, completed: 0, stopped: 4, stoppedBy: { replied: 2, "opted-out": 1, status: 1, "contact-deleted": 0, "automation-off": 0, restarted: 0, "stopped-by-hand": 0 } });
  const one = (await expectStatus(await s.api(`/automations/${a.id}`), 200)).data.automation;
  expect(one.runs).toEqual(listed.runs);
});

test("the runs listing names each run's contact (null once deleted)", async () => {
  const body = { name: "Follow-up", formId, steps: [{ template: "Hi {{firstName}}", delay: "1d" }] };
  const a = (await expectStatus(await s.api("/automations", { method: "POST", json: body }), 201)).data.automation;
  const kept = (await expectStatus(await submit("+14155550311"), 200)).data.contactId;
  const gone = (await expectStatus(await submit("+14155550312"), 200)).data.contactId;
  await expectStatus(await s.api(`/contacts/${gone}`, { method: "DELETE" }), 200);
  const runs = (await expectStatus(await s.api(`/automations/${a.id}/runs`), 200)).data.runs as any[];
  expect(runs.find((r) => r.contactId === kept).contact).toEqual({ firstName: "Ann", lastName: null, phoneNumber: "+14155550311" });
  expect(runs.find((r) => r.contactId === gone).contact).toBeNull();
});
