/**
 * How automations meet the rest of the product (docs/api-decisions.md, "Automations: follow-ups"):
 * keyword replies, opting out by hand, deleting and bulk changes from the dashboard stop runs as
 * an owner expects, and a test submission never starts one. Each check reads the step's message
 * first (GET /v1/messages/<id> does not wake the automations engine), so a stop that waited for
 * the next read of the runs would fail here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { listTotal, newApiKey, queueLength } from "../helpers/reads";
import { newAccount, updateAccount } from "../helpers/accounts";

let s: TestServer;
let standardKey: string;
let formId: string;

beforeAll(async () => {
  s = await startTestServer();
  // Many small calls per test: the account's burst is not what is tested here.
  updateAccount(s, s.accountId, { apiLimitPerHour: 100_000, apiBurstPerMinute: 10_000 });
  standardKey = await newApiKey(s, "standard_access");
  const form = formBody({ fields: [{ name: "firstName", type: "text" }], settings: { delayMinutes: 0, timezone: "UTC" } });
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
});
afterAll(() => s.stop());

let phoneSeq = 4000;
const newPhone = () => `+1415555${phoneSeq++}`;
const submit = (phoneNumber: string) =>
  fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber, firstName: "Ann" }) });
const inbound = (from: string, body: string) =>
  fetch(`${s.base}/messages/${standardKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body }) });

/** An automation of two texts, days away (so nothing goes out during the test). */
async function automation(over: Record<string, unknown> = {}) {
  const body = {
    name: `Follow-up ${crypto.randomUUID().slice(0, 6)}`,
    formId,
    steps: [
      { template: "Thanks {{firstName}}!", delay: "1d" },
      { template: "How did we do?", delay: "3d" },
    ],
    ...over,
  };
  return (await expectStatus(await s.api("/automations", { method: "POST", json: body }), 201)).data.automation;
}
const remove = (id: string) => s.api(`/automations/${id}`, { method: "DELETE" });

/** A contact who filled in the form, with their run of `a` and its first step's message id. */
async function going(a: { id: string }) {
  const phone = newPhone();
  const contactId = (await expectStatus(await submit(phone), 200)).data.contactId as string;
  const runs = (await expectStatus(await s.api(`/automations/${a.id}/runs?contactId=${contactId}`), 200)).data.runs;
  expect(runs).toHaveLength(1);
  expect(runs[0].status).toBe("active");
  return { phone, contactId, runId: runs[0].id as string, messageId: runs[0].steps[0].messageId as string };
}
const messageStatus = async (id: string) => (await expectStatus(await s.api(`/messages/${id}`), 200)).data.message.status;
const runOf = async (a: { id: string }, contactId: string) => (await expectStatus(await s.api(`/automations/${a.id}/runs?contactId=${contactId}`), 200)).data.runs[0];

describe("keyword replies and automations", () => {
  test("a keyword reply that sets a stopOnStatus status stops the run (status) when replies do not stop it", async () => {
    const a = await automation({ stopOnReply: false, stopOnStatus: ["converted"] });
    const rule = (await expectStatus(await s.api("/keyword-replies", { method: "POST", json: { keywords: ["BOOKED"], reply: "See you soon!", setStatus: "converted" } }), 201)).data.keywordReply;
    const p = await going(a);
    await expectStatus(await inbound(p.phone, "booked"), 201);
    expect(await messageStatus(p.messageId)).toBe("cancelled");
    expect(await runOf(a, p.contactId)).toMatchObject({ status: "stopped", stoppedReason: "status" });
    // The keyword reply itself still went to them (it is their answer, not the automation's).
    const replies = (await expectStatus(await s.api(`/messages?contactId=${p.contactId}&limit=50`), 200)).data.messages.filter((m: any) => m.content === "See you soon!");
    expect(replies).toHaveLength(1);
    expect(replies[0].status).toBe("queued");
    await expectStatus(await s.api(`/keyword-replies/${rule.id}`, { method: "DELETE" }), 200);
    await expectStatus(await remove(a.id), 200);
  });

  test("a keyword text (HOURS) is a reply: it stops a run that stops on replies (replied)", async () => {
    const a = await automation({ stopOnReply: true, stopOnStatus: ["converted"] });
    const other = await automation({ stopOnReply: false });
    const rule = (await expectStatus(await s.api("/keyword-replies", { method: "POST", json: { keywords: ["HOURS"], reply: "We're open 9-5.", setStatus: "converted" } }), 201)).data.keywordReply;
    const p = await going(a);
    const q = (await expectStatus(await s.api(`/automations/${other.id}/runs?contactId=${p.contactId}`), 200)).data.runs[0];
    await expectStatus(await inbound(p.phone, "Hours?"), 201);
    expect(await messageStatus(p.messageId)).toBe("cancelled");
    // A reply outranks a status (the answer came first in the person's eyes).
    expect(await runOf(a, p.contactId)).toMatchObject({ status: "stopped", stoppedReason: "replied" });
    // The automation that does not stop on replies keeps going.
    expect(await runOf(other, p.contactId)).toMatchObject({ id: q.id, status: "active" });
    await expectStatus(await s.api(`/keyword-replies/${rule.id}`, { method: "DELETE" }), 200);
    for (const x of [a, other]) await expectStatus(await remove(x.id), 200);
  });
});

describe("the contact page's and the contacts list's actions stop runs", () => {
  test("opting out by hand stops the run (opted-out), even when replies do not stop it", async () => {
    const a = await automation({ stopOnReply: false });
    const p = await going(a);
    await expectStatus(await s.api(`/contacts/${p.contactId}/opt-out`, { method: "POST", json: { reason: "Phoned to cancel" } }), 200);
    expect(await messageStatus(p.messageId)).toBe("cancelled");
    const run = await runOf(a, p.contactId);
    expect(run).toMatchObject({ status: "stopped", stoppedReason: "opted-out" });
    expect(run.steps.map((x: any) => x.status)).toEqual(["cancelled", "cancelled"]);
    await expectStatus(await remove(a.id), 200);
  });

  test("opting a selection out stops their runs (opted-out)", async () => {
    const a = await automation({ stopOnReply: false });
    const p1 = await going(a);
    const p2 = await going(a);
    const kept = await going(a);
    await expectStatus(await s.api("/contacts/bulk/opt-out", { method: "POST", json: { contactIds: [p1.contactId, p2.contactId] } }), 200);
    expect(await messageStatus(p1.messageId)).toBe("cancelled");
    expect(await messageStatus(p2.messageId)).toBe("cancelled");
    expect(await messageStatus(kept.messageId)).toBe("queued");
    for (const p of [p1, p2]) expect(await runOf(a, p.contactId)).toMatchObject({ status: "stopped", stoppedReason: "opted-out" });
    expect((await runOf(a, kept.contactId)).status).toBe("active");
    await expectStatus(await remove(a.id), 200);
  });

  test("deleting a contact (one, or a selection) stops their runs (contact-deleted) and their texts leave the queue", async () => {
    const a = await automation();
    const one = await going(a);
    const many = [await going(a), await going(a)];
    // The texts of those three waiting in line, and a contact who stays, to ask the queue's length with.
    const theirs = (await Promise.all([one, ...many].map((p) => listTotal(s, `/messages?status=queued&contactId=${p.contactId}`)))).reduce((x, y) => x + y, 0);
    expect(theirs).toBeGreaterThanOrEqual(3);
    const stays = await going(a);
    const waiting = await queueLength(s, { contactId: stays.contactId });
    await expectStatus(await s.api(`/contacts/${one.contactId}`, { method: "DELETE" }), 200);
    await expectStatus(await s.api("/contacts/bulk/delete", { method: "POST", json: { contactIds: many.map((p) => p.contactId) } }), 200);
    for (const p of [one, ...many]) {
      await expectStatus(await s.api(`/messages/${p.messageId}`), 404);
      const run = (await expectStatus(await s.api(`/automations/${a.id}/runs?contactId=${p.contactId}`), 200)).data.runs[0];
      expect(run).toMatchObject({ id: p.runId, status: "stopped", stoppedReason: "contact-deleted", contact: null });
    }
    // Their texts left the queue: as many fewer wait in line.
    expect(await queueLength(s, { contactId: stays.contactId })).toBe(waiting - theirs);
    await expectStatus(await remove(a.id), 200);
  });

  test("a bulk status change stops the runs of automations with that stopOnStatus (status), and only those", async () => {
    const a = await automation({ stopOnStatus: ["converted"] });
    const b = await automation({ stopOnStatus: ["contacted"] });
    const p1 = await going(a);
    const p2 = await going(a);
    const bRun1 = await runOf(b, p1.contactId);
    await expectStatus(await s.api("/contacts/bulk", { method: "PUT", json: { contactIds: [p1.contactId, p2.contactId], updates: { status: "converted" } } }), 200);
    expect(await messageStatus(p1.messageId)).toBe("cancelled");
    expect(await messageStatus(p2.messageId)).toBe("cancelled");
    for (const p of [p1, p2]) expect(await runOf(a, p.contactId)).toMatchObject({ status: "stopped", stoppedReason: "status" });
    expect(await runOf(b, p1.contactId)).toMatchObject({ id: bRun1.id, status: "active" });
    expect(await messageStatus(bRun1.steps[0].messageId)).toBe("queued");
    for (const x of [a, b]) await expectStatus(await remove(x.id), 200);
  });
});

describe("a test submission", () => {
  test("never starts a run, even when it is sent to the owner's phone", async () => {
    const a = await automation();
    // What a run would come from (a submission) and what it makes (runs), across the account.
    const counts = async () => ({ submissions: await listTotal(s, "/submissions"), runs: (await expectStatus(await s.api("/automations"), 200)).data.automations.map((x: any) => x.runs) });
    const before = await counts();
    const phone = newPhone();
    await expectStatus(await s.api(`/forms/${formId}/test`, { method: "POST", json: { values: { phoneNumber: phone, firstName: "Ada" } } }), 200);
    const sent = await expectStatus(await s.api(`/forms/${formId}/test`, { method: "POST", json: { values: { phoneNumber: phone, firstName: "Ada" }, sendTo: newPhone() } }), 200);
    expect(sent.data.sent.messageId).toBeTruthy();
    s.running.deps.automations.sweep(); // arrange: the engine's sweep, run at once (its timer does not follow the test)
    expect((await expectStatus(await s.api(`/automations/${a.id}/runs`), 200)).data.runs).toEqual([]);
    expect((await expectStatus(await s.api(`/automations/${a.id}`), 200)).data.automation.runs).toMatchObject({ active: 0, completed: 0, stopped: 0 });
    expect(await counts()).toEqual(before);
    // The same values from the website do start it: the check above is not vacuous.
    await expectStatus(await submit(phone), 200);
    expect((await expectStatus(await s.api(`/automations/${a.id}/runs`), 200)).data.runs).toHaveLength(1);
    await expectStatus(await remove(a.id), 200);
  });
});

describe("stopping one person's run by hand (POST /v1/automations/<id>/runs/<runId>/stop)", () => {
  const stop = (a: string, run: string, key?: string) => s.api(`/automations/${a}/runs/${run}/stop`, { method: "POST", ...(key ? { key } : {}) });

  test("cancels the texts not sent yet, keeps the ones sent, and says so; the contact's page names the automation", async () => {
    const a = await automation();
    const p = await going(a);
    const [, second] = (await runOf(a, p.contactId)).steps;
    await expectStatus(await s.api(`/messages/${p.messageId}/status`, { method: "PUT", json: { status: "sent", sentAt: new Date().toISOString() } }), 200);
    const waiting = await queueLength(s, { contactId: p.contactId });
    const r = (await expectStatus(await stop(a.id, p.runId), 200)).data;
    expect(r.changed).toBe(true);
    expect(r.run).toMatchObject({ id: p.runId, status: "stopped", stoppedReason: "stopped-by-hand" });
    expect(r.run.steps.map((x: any) => x.status)).toEqual(["sent", "cancelled"]);
    expect(await messageStatus(second.messageId)).toBe("cancelled");
    // The second text left the queue: one fewer waits in line.
    expect(await queueLength(s, { contactId: p.contactId })).toBe(waiting - 1);
    const c = (await expectStatus(await s.api(`/contacts/${p.contactId}`), 200)).data;
    expect(c.automationRuns[0]).toMatchObject({ id: p.runId, automationId: a.id, automation: { name: a.name, deleted: false }, stoppedReason: "stopped-by-hand" });
    expect((await expectStatus(await s.api(`/automations/${a.id}`), 200)).data.automation.runs.stoppedBy["stopped-by-hand"]).toBe(1);
    // Deleted since: the contact's page still names it, and says it is gone.
    await expectStatus(await remove(a.id), 200);
    expect((await expectStatus(await s.api(`/contacts/${p.contactId}`), 200)).data.automationRuns[0].automation).toEqual({ name: a.name, deleted: true });
  });

  test("exactly once: a second click, or a run a reply stopped first, changes nothing", async () => {
    const a = await automation();
    const p = await going(a);
    const first = (await expectStatus(await stop(a.id, p.runId), 200)).data.run;
    const updated = (await expectStatus(await s.api(`/messages/${p.messageId}`), 200)).data.message.updatedAt;
    const again = (await expectStatus(await stop(a.id, p.runId), 200)).data;
    expect(again).toMatchObject({ changed: false, run: { status: "stopped", stoppedReason: "stopped-by-hand" } });
    expect((await expectStatus(await s.api(`/messages/${p.messageId}`), 200)).data.message.updatedAt).toBe(updated);
    expect(again.run.finishedAt).toBe(first.finishedAt);
    const q = await going(a);
    await expectStatus(await inbound(q.phone, "Thanks, see you then"), 201);
    const late = (await expectStatus(await stop(a.id, q.runId), 200)).data;
    expect(late).toMatchObject({ changed: false, run: { status: "stopped", stoppedReason: "replied" } });
    await expectStatus(await remove(a.id), 200);
  });

  test("admins only; another account, another automation's run and unknown ids are 404 and change nothing", async () => {
    const a = await automation();
    const b = await automation();
    const p = await going(a);
    const bRun = await runOf(b, p.contactId);
    expect((await expectStatus(await stop(a.id, p.runId, standardKey), 403)).code).toBe("PERMISSION_ERROR");
    const other = newAccount(s, { name: "Other shop" });
    expect((await expectStatus(await stop(a.id, p.runId, other.apiKey), 404)).code).toBe("AUTOMATION_NOT_FOUND");
    // Their own automation with this account's run id: still not found.
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody(), key: other.apiKey }), 201)).data.form.id;
    const theirs = (await expectStatus(await s.api("/automations", { method: "POST", json: { name: "T", formId: f, steps: [{ template: "x", delay: "1d" }] }, key: other.apiKey }), 201)).data.automation;
    expect((await expectStatus(await stop(theirs.id, p.runId, other.apiKey), 404)).code).toBe("AUTOMATION_RUN_NOT_FOUND");
    expect((await expectStatus(await stop(a.id, bRun.id), 404)).code).toBe("AUTOMATION_RUN_NOT_FOUND");
    expect((await expectStatus(await stop(a.id, crypto.randomUUID()), 404)).code).toBe("AUTOMATION_RUN_NOT_FOUND");
    expect((await expectStatus(await stop(a.id, "not-a-run"), 404)).code).toBe("AUTOMATION_RUN_NOT_FOUND");
    expect((await expectStatus(await stop(crypto.randomUUID(), p.runId), 404)).code).toBe("AUTOMATION_NOT_FOUND");
    expect(await runOf(a, p.contactId)).toMatchObject({ status: "active" });
    expect(await runOf(b, p.contactId)).toMatchObject({ status: "active" });
    expect(await messageStatus(p.messageId)).toBe("queued");
    for (const x of [a, b]) await expectStatus(await remove(x.id), 200);
  });
});
