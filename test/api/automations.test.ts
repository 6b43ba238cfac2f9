import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { listTotal, messageOf, newApiKey, queueLength } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

// 10:00 in New York on Friday 30 October 2026 (EDT, UTC-4); the clocks go back on Sunday 1 November.
const T0 = Date.parse("2026-10-30T14:00:00.000Z");
const ZONE = "America/New_York";

let s: TestServer;
let standardKey: string;
let formId: string;
const clock = { now: T0 };

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => clock.now });
  standardKey = await newApiKey(s, "standard_access");
  const form = formBody({
    fields: [
      { name: "firstName", type: "text" },
      { name: "appointment", type: "date" },
      { name: "note", type: "text" },
    ],
    settings: { delayMinutes: 0, timezone: ZONE, duplicateWindowMinutes: 10 },
  });
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
});
afterAll(() => s.stop());

let phoneSeq = 2000;
const newPhone = () => `+1415555${phoneSeq++}`;
const submit = (json: Record<string, unknown>, id = formId) =>
  fetch(`${s.base}/forms/${id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
const inbound = (from: string, body: string) =>
  fetch(`${s.base}/messages/${standardKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body, receivedAt: clock.now }) });

const twoSteps = (over: Record<string, unknown> = {}) => ({
  name: `Thanks and reminder ${crypto.randomUUID().slice(0, 6)}`,
  formId,
  steps: [
    { template: "Thanks {{firstName}}! How did we do? {{reviewLink | https://example.com/r}}", delay: "2d", sendAt: "10:00" },
    { template: "Reminder: your visit is tomorrow. Reply C to cancel.", relativeTo: "appointment", offset: "-1d", sendAt: "09:00" },
  ],
  stopOnReply: true,
  stopOnStatus: ["converted"],
  restartOnResubmit: true,
  ...over,
});

async function createAutomation(body: Record<string, unknown> = twoSteps()) {
  return (await expectStatus(await s.api("/automations", { method: "POST", json: body }), 201)).data.automation;
}
async function runsOf(id: string, q = "") {
  return (await expectStatus(await s.api(`/automations/${id}/runs${q}`), 200)).data.runs as any[];
}

describe("automations: CRUD and validation", () => {
  test("stopOnReply not given: false for date reminders only, true when a step counts from the submission; kept on PUT", async () => {
    // Off: the other tests' submissions must not start these.
    const { stopOnReply: _a, ...mixed } = twoSteps({ isActive: false });
    expect((await createAutomation(mixed)).stopOnReply).toBe(true);
    const reminders = { ...mixed, steps: [mixed.steps[1], { template: "See you today!", relativeTo: "appointment", offset: "0d", sendAt: "08:00" }] };
    const r = await createAutomation(reminders);
    expect(r.stopOnReply).toBe(false);
    expect((await createAutomation({ ...reminders, stopOnReply: true })).stopOnReply).toBe(true);
    // A PUT that leaves it out keeps what it was.
    expect((await expectStatus(await s.api(`/automations/${r.id}`, { method: "PUT", json: { name: "Pickup reminder" } }), 200)).data.automation.stopOnReply).toBe(false);
  });

  test("create answers 201 with the automation; GET, list with run counts, PUT, DELETE", async () => {
    const a = await createAutomation();
    expect(a).toMatchObject({ formId, isActive: true, stopOnReply: true, stopOnStatus: ["converted"], restartOnResubmit: true, runs: { active: 0, completed: 0, stopped: 0 } });
    expect(a.steps[1]).toEqual({ template: "Reminder: your visit is tomorrow. Reply C to cancel.", relativeTo: "appointment", offset: "-1d", sendAt: "09:00" });
    expect((await expectStatus(await s.api(`/automations/${a.id}`), 200)).data.automation.id).toBe(a.id);
    const list = (await expectStatus(await s.api("/automations"), 200)).data;
    expect(list.automations.some((x: any) => x.id === a.id)).toBe(true);
    expect(list.pagination.total).toBeGreaterThanOrEqual(1);
    const put = (await expectStatus(await s.api(`/automations/${a.id}`, { method: "PUT", json: { name: "Renamed", isActive: false } }), 200)).data.automation;
    expect(put).toMatchObject({ name: "Renamed", isActive: false, steps: a.steps });
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
    await expectStatus(await s.api(`/automations/${a.id}`), 404);
    await expectStatus(await s.api(`/automations/${a.id}/runs`), 404);
  });

  test("validation errors name the step and the field, and nothing is created", async () => {
    const automations = () => listTotal(s, "/automations");
    const before = await automations();
    const r = await expectStatus(
      await s.api("/automations", {
        method: "POST",
        json: twoSteps({
          steps: [
            { template: "Hi", delay: "2 days" },
            { template: "", relativeTo: "appointment", offset: "yesterday", sendAt: "25:00" },
            { template: "both", delay: "1d", relativeTo: "appointment" },
            { template: "none" },
          ],
          stopOnStatus: ["gone"],
        }),
      }),
      400,
    );
    const fields = r.errors.map((e: any) => e.field);
    expect(fields).toEqual(expect.arrayContaining(["steps[0].delay", "steps[1].template", "steps[1].offset", "steps[1].sendAt", "steps[2].delay", "steps[3].delay", "stopOnStatus"]));
    expect(await automations()).toBe(before);
  });

  test("relativeTo that is not a date field of the form is 400 naming the step", async () => {
    for (const relativeTo of ["note", "missing"]) {
      const r = await expectStatus(await s.api("/automations", { method: "POST", json: twoSteps({ steps: [{ template: "x", relativeTo, offset: "-1d" }] }) }), 400);
      expect(r.errors[0].field).toBe("steps[0].relativeTo");
      expect(r.errors[0].message).toContain(relativeTo);
    }
  });

  test("an unknown form is 400 on formId; unknown ids are 404; a standard key cannot write", async () => {
    const r = await expectStatus(await s.api("/automations", { method: "POST", json: twoSteps({ formId: crypto.randomUUID() }) }), 400);
    expect(r.errors[0].field).toBe("formId");
    await expectStatus(await s.api(`/automations/${crypto.randomUUID()}`), 404);
    await expectStatus(await s.api("/automations/not-an-id", { method: "PUT", json: { name: "x" } }), 404);
    await expectStatus(await s.api("/automations", { method: "POST", json: twoSteps(), key: standardKey }), 403);
    await expectStatus(await s.api("/automations", { key: standardKey }), 200);
  });
});

describe("automations: runs", () => {
  test("a submission starts a run whose steps are scheduled at the local times, across the clock change", async () => {
    const a = await createAutomation();
    const phone = newPhone();
    clock.now = T0;
    const sub = await expectStatus(await submit({ phoneNumber: phone, firstName: "Ann", appointment: "2026-11-02" }), 200);
    const runs = await runsOf(a.id);
    expect(runs).toHaveLength(1);
    const run = runs[0];
    expect(run).toMatchObject({ contactId: sub.data.contactId, status: "active", stoppedReason: null, startedAt: new Date(T0).toISOString() });
    // Sunday 1 November 10:00 EST (UTC-5) and 09:00 EST: the local times, not 24-hour multiples.
    expect(run.steps.map((x: any) => [x.index, x.scheduledFor, x.status])).toEqual([
      [0, "2026-11-01T15:00:00.000Z", "scheduled"],
      [1, "2026-11-01T14:00:00.000Z", "scheduled"],
    ]);
    const m = (await expectStatus(await s.api(`/messages/${run.steps[0].messageId}`), 200)).data.message;
    expect(m).toMatchObject({ status: "queued", content: "Thanks Ann! How did we do? https://example.com/r", scheduledFor: "2026-11-01T15:00:00.000Z" });
    expect(m.metadata).toMatchObject({ source: "automation", automationId: a.id, step: 0 });
    // The contact lists its runs.
    const c = (await expectStatus(await s.api(`/contacts/${sub.data.contactId}`), 200)).data;
    expect(c.automationRuns.map((r: any) => r.id)).toEqual([run.id]);
    const counts = (await expectStatus(await s.api(`/automations/${a.id}`), 200)).data.automation.runs;
    expect(counts).toMatchObject({ active: 1, completed: 0, stopped: 0 });
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });

  test("a reply stops the run and cancels its unsent steps", async () => {
    const a = await createAutomation();
    const phone = newPhone();
    await expectStatus(await submit({ phoneNumber: phone, firstName: "Bo", appointment: "2026-11-10" }), 200);
    const [run] = await runsOf(a.id);
    const waiting = await queueLength(s, { phoneNumber: phone });
    await expectStatus(await inbound(phone, "sounds good, thanks"), 201);
    const [after] = await runsOf(a.id);
    expect(after).toMatchObject({ id: run.id, status: "stopped", stoppedReason: "replied" });
    expect(after.steps.map((x: any) => x.status)).toEqual(["cancelled", "cancelled"]);
    for (const step of run.steps) expect((await messageOf(s, step.messageId))!.status).toBe("cancelled");
    // Both steps left the queue: two fewer texts wait in line.
    expect(await queueLength(s, { phoneNumber: phone })).toBe(waiting - run.steps.length);
    expect((await runsOf(a.id, "?status=stopped")).length).toBe(1);
    expect((await runsOf(a.id, "?status=active")).length).toBe(0);
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });

  test("an opt-out stops the run (opted-out), even with stopOnReply off", async () => {
    const a = await createAutomation(twoSteps({ stopOnReply: false }));
    const phone = newPhone();
    await expectStatus(await submit({ phoneNumber: phone, appointment: "2026-11-10" }), 200);
    await expectStatus(await inbound(phone, "just a question"), 201);
    expect((await runsOf(a.id))[0].status).toBe("active");
    await expectStatus(await inbound(phone, "STOP"), 201);
    const [run] = await runsOf(a.id);
    expect(run).toMatchObject({ status: "stopped", stoppedReason: "opted-out" });
    expect(run.steps.every((x: any) => x.status === "cancelled")).toBe(true);
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });

  test("a resubmission restarts the run with restartOnResubmit, and is ignored without it", async () => {
    const phone = newPhone();
    const restart = await createAutomation(twoSteps({ restartOnResubmit: true }));
    const ignore = await createAutomation(twoSteps({ restartOnResubmit: false }));
    await expectStatus(await submit({ phoneNumber: phone, appointment: "2026-11-10" }), 200);
    clock.now = T0 + 3_600_000;
    await expectStatus(await submit({ phoneNumber: phone, appointment: "2026-11-12", note: "second" }), 200);
    const r = await runsOf(restart.id);
    expect(r.map((x) => [x.status, x.stoppedReason])).toEqual([["active", null], ["stopped", "restarted"]]);
    expect(r[1].steps.every((x: any) => x.status === "cancelled")).toBe(true);
    expect(r[0].steps[1].scheduledFor).toBe("2026-11-11T14:00:00.000Z");
    const i = await runsOf(ignore.id);
    expect(i).toHaveLength(1);
    expect(i[0].steps[1].scheduledFor).toBe("2026-11-09T14:00:00.000Z");
    // A resubmission inside the form's duplicate window (no second thank-you text) is still a resubmission.
    clock.now = T0 + 3_660_000;
    const dup = await expectStatus(await submit({ phoneNumber: phone, appointment: "2026-11-13" }), 200);
    expect(dup.data.duplicate).toBe(true);
    expect((await runsOf(restart.id)).map((x) => x.status)).toEqual(["active", "stopped", "stopped"]);
    expect(await runsOf(ignore.id)).toHaveLength(1);
    clock.now = T0;
    for (const a of [restart, ignore]) await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });

  test("a step whose date has passed is skipped (past), not sent late", async () => {
    const a = await createAutomation();
    await expectStatus(await submit({ phoneNumber: newPhone(), appointment: "2026-10-29" }), 200);
    const [run] = await runsOf(a.id);
    expect(run.steps[1]).toMatchObject({ status: "skipped", skipped: "past", messageId: null });
    expect(run.steps[0].status).toBe("scheduled");
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });

  test("turning the automation off stops its runs (automation-off)", async () => {
    const a = await createAutomation();
    await expectStatus(await submit({ phoneNumber: newPhone(), appointment: "2026-11-10" }), 200);
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "PUT", json: { isActive: false } }), 200);
    const [run] = await runsOf(a.id);
    expect(run).toMatchObject({ status: "stopped", stoppedReason: "automation-off" });
    // Off: a new submission starts nothing.
    await expectStatus(await submit({ phoneNumber: newPhone(), appointment: "2026-11-10" }), 200);
    expect(await runsOf(a.id)).toHaveLength(1);
  });

  test("runs listing refuses bad filters and pages", async () => {
    const a = await createAutomation();
    const r = await expectStatus(await s.api(`/automations/${a.id}/runs?status=done&page=0`), 400);
    expect(r.errors.map((e: any) => e.field).sort()).toEqual(["page", "status"]);
    expect(await runsOf(a.id, `?contactId=nope`)).toEqual([]);
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });
});

describe("automations: the rules of webhook texts, and the other stops", () => {
  test("a status in stopOnStatus stops the run (status); a deleted contact's run stops (contact-deleted)", async () => {
    const a = await createAutomation();
    const p1 = newPhone();
    const p2 = newPhone();
    const c1 = (await expectStatus(await submit({ phoneNumber: p1, appointment: "2026-11-10" }), 200)).data.contactId;
    const c2 = (await expectStatus(await submit({ phoneNumber: p2, appointment: "2026-11-10" }), 200)).data.contactId;
    await expectStatus(await s.api(`/contacts/${c1}`, { method: "PUT", json: { status: "responded" } }), 200);
    expect((await runsOf(a.id, `?contactId=${c1}`))[0].status).toBe("active");
    await expectStatus(await s.api(`/contacts/${c1}`, { method: "PUT", json: { status: "converted" } }), 200);
    expect((await runsOf(a.id, `?contactId=${c1}`))[0]).toMatchObject({ status: "stopped", stoppedReason: "status" });
    await expectStatus(await s.api(`/contacts/${c2}`, { method: "DELETE" }), 200);
    const [gone] = await runsOf(a.id, `?contactId=${c2}`);
    expect(gone).toMatchObject({ status: "stopped", stoppedReason: "contact-deleted" });
    expect(gone.steps.map((x: any) => x.status)).toEqual(["cancelled", "cancelled"]);
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });

  test("quiet hours move a step to their end; the per-recipient limit skips a step", async () => {
    const form = formBody({
      fields: [{ name: "firstName", type: "text" }],
      settings: { delayMinutes: 0, timezone: ZONE, quietHours: { start: "21:00", end: "08:00" }, recipientLimitPerDay: 2 },
    });
    const fid = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
    const a = await createAutomation({
      name: "Quiet",
      formId: fid,
      steps: [
        { template: "late", delay: "1d", sendAt: "22:30" },
        { template: "two", delay: "2d", sendAt: "12:00" },
        { template: "three", delay: "2d", sendAt: "12:05" },
      ],
    });
    const phone = newPhone();
    await expectStatus(await submit({ phoneNumber: phone }, fid), 200);
    const [run] = await runsOf(a.id);
    // 22:30 on Saturday is inside 21:00-08:00: Sunday 08:00 EST.
    expect(run.steps[0]).toMatchObject({ status: "scheduled", scheduledFor: "2026-11-01T13:00:00.000Z" });
    expect(run.steps[1].status).toBe("scheduled");
    // The form's own text is due now, step 0 Sunday 08:00 and step 1 Sunday 12:00: two in the 24 h before 12:05.
    expect(run.steps[2]).toMatchObject({ status: "skipped", skipped: "recipient-limit", messageId: null });
  });

  test("no run for a contact who did not tick the form's consent box, nor for an opted-out number", async () => {
    const form = formBody({ fields: [{ name: "firstName", type: "text" }, { name: "consent", type: "text" }], settings: { delayMinutes: 0, timezone: ZONE, consentField: "consent" } });
    const fid = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
    const a = await createAutomation({ name: "Consent", formId: fid, steps: [{ template: "hi", delay: "1d" }] });
    await expectStatus(await submit({ phoneNumber: newPhone() }, fid), 200);
    expect(await runsOf(a.id)).toHaveLength(0);
    await expectStatus(await submit({ phoneNumber: newPhone(), consent: "yes" }, fid), 200);
    expect(await runsOf(a.id)).toHaveLength(1);
    const out = newPhone();
    await expectStatus(await inbound(out, "STOP"), 201);
    await expectStatus(await submit({ phoneNumber: out, consent: "yes" }, fid), 200);
    expect(await runsOf(a.id)).toHaveLength(1);
  });

  test("a run completes once its steps have gone out", async () => {
    const a = await createAutomation({ name: "Soon", formId, steps: [{ template: "soon", delay: "30m" }] });
    await expectStatus(await submit({ phoneNumber: newPhone() }), 200);
    const [run] = await runsOf(a.id);
    await expectStatus(await s.api(`/messages/${run.steps[0].messageId}/status`, { method: "PUT", json: { status: "sent", sentAt: new Date(T0).toISOString() } }), 200);
    clock.now = T0 + 31 * 60_000;
    s.running.deps.automations.completeDue(); // arrange: the engine's timer tick, run at once at the test's clock
    const [done] = await runsOf(a.id);
    expect(done).toMatchObject({ status: "completed", stoppedReason: null });
    expect(done.steps[0].status).toBe("sent");
    expect((await expectStatus(await s.api(`/automations/${a.id}`), 200)).data.automation.runs).toMatchObject({ active: 0, completed: 1, stopped: 0 });
    clock.now = T0;
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });
});

describe("automations: start for existing contacts", () => {
  test("dryRun counts who would start and who is skipped and why; the start creates the runs once", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: 0, timezone: ZONE } }) }), 201)).data.form.id;
    const a = await createAutomation({ name: "Win-back", formId: f, steps: [{ template: "We miss you {{firstName | friend}}", delay: "1d", sendAt: "11:00" }], stopOnStatus: ["converted"] });
    const mk = async (json: Record<string, unknown>) => (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: newPhone(), tags: ["winback"], ...json } }), 201)).data.contact.id;
    await mk({ firstName: "A" });
    await mk({ firstName: "B" });
    await mk({ firstName: "C", status: "converted" });
    await mk({ firstName: "D", optedOut: true });
    const segment = { tags: ["winback"] };
    const before = await listTotal(s, "/messages");
    const dry = (await expectStatus(await s.api(`/automations/${a.id}/start?dryRun=true`, { method: "POST", json: { segment } }), 200)).data;
    expect(dry).toEqual({
      dryRun: true, contacts: 4, starting: 2, skipped: { "opted-out": 1, status: 1, "no-consent": 0, "already-running": 0 },
      // How long the phones take over the first texts: the capacity model (docs/phones.md, "How fast a phone sends").
      sending: { texts: 2, minutes: expect.any(Number), phones: expect.any(Number), phonesConnected: expect.any(Number), basis: expect.stringMatching(/^(connected-phones|no-phone-connected)$/) },
    });
    expect(await listTotal(s, "/messages")).toBe(before);
    expect((await expectStatus(await s.api(`/automations/${a.id}/start`, { method: "POST", json: { segment, dryRun: true } }), 200)).data.starting).toBe(2);
    const r = (await expectStatus(await s.api(`/automations/${a.id}/start`, { method: "POST", json: { segment } }), 202)).data;
    expect(r).toMatchObject({ dryRun: false, contacts: 4, starting: 2, sending: { texts: 2 } });
    await s.running.deps.automations.idle(); // arrange: the start's background pass has run (no request says when it has)
    const runs = await runsOf(a.id);
    expect(runs).toHaveLength(2);
    // Delays count from the start: Saturday 31 October 11:00 EDT.
    expect(runs.every((x) => x.steps[0].scheduledFor === "2026-10-31T15:00:00.000Z")).toBe(true);
    // Started twice: the running ones are skipped.
    const again = (await expectStatus(await s.api(`/automations/${a.id}/start?dryRun=true`, { method: "POST", json: { segment } }), 200)).data;
    expect(again.skipped["already-running"]).toBe(2);
    await expectStatus(await s.api(`/automations/${a.id}/start`, { method: "POST", json: { segment } }), 202);
    await s.running.deps.automations.idle(); // arrange: the start's background pass has run (no request says when it has)
    expect(await runsOf(a.id)).toHaveLength(2);
  });

  test("bad segments and bodies are 400 naming the field; a turned-off automation is 409", async () => {
    const a = await createAutomation();
    const r = await expectStatus(await s.api(`/automations/${a.id}/start`, { method: "POST", json: { segment: { colour: "red", status: "gone" }, dryRun: "maybe" } }), 400);
    expect(r.errors.map((e: any) => e.field)).toEqual(expect.arrayContaining(["segment.colour", "segment.status"]));
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "PUT", json: { isActive: false } }), 200);
    const off = await expectStatus(await s.api(`/automations/${a.id}/start`, { method: "POST", json: {} }), 409);
    expect(off.code).toBe("AUTOMATION_INACTIVE");
    await expectStatus(await s.api(`/automations/${crypto.randomUUID()}/start`, { method: "POST", json: {} }), 404);
  });
});

describe("automations: tenant isolation", () => {
  test("another account sees none of it and cannot use this account's forms or contacts", async () => {
    const a = await createAutomation();
    const sub = await expectStatus(await submit({ phoneNumber: newPhone(), appointment: "2026-11-10" }), 200);
    const other = newAccount(s, { name: "Other shop" });
    const as = { key: other.apiKey };
    for (const [path, method] of [
      [`/automations/${a.id}`, "GET"],
      [`/automations/${a.id}/runs`, "GET"],
      [`/automations/${a.id}`, "DELETE"],
    ] as const) {
      expect((await expectStatus(await s.api(path, { method, ...as }), 404)).code).toBe("AUTOMATION_NOT_FOUND");
    }
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "PUT", json: { name: "mine" }, ...as }), 404);
    await expectStatus(await s.api(`/automations/${a.id}/start`, { method: "POST", json: {}, ...as }), 404);
    expect((await expectStatus(await s.api("/automations", as), 200)).data.automations).toEqual([]);
    // This account's form is not theirs to follow.
    const r = await expectStatus(await s.api("/automations", { method: "POST", json: twoSteps(), ...as }), 400);
    expect(r.errors[0].field).toBe("formId");
    await expectStatus(await s.api(`/contacts/${sub.data.contactId}`, as), 404);
    // Their start over "every contact" counts their contacts only.
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody(), ...as }), 201)).data.form.id;
    const theirs = (await expectStatus(await s.api("/automations", { method: "POST", json: { name: "T", formId: f, steps: [{ template: "x", delay: "1d" }] }, ...as }), 201)).data.automation;
    const dry = (await expectStatus(await s.api(`/automations/${theirs.id}/start?dryRun=true`, { method: "POST", json: {}, ...as }), 200)).data;
    expect(dry.contacts).toBe(0);
    await expectStatus(await s.api(`/automations/${a.id}`, { method: "DELETE" }), 200);
  });
});
