import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { expectStatus, formBody, startTestServer, type TestServer } from "../helpers/server";
import { eventSink, type EventSink } from "../helpers/event-sink";
import { waitFor } from "../helpers/event-receiver-client";

/** Events whose causes came with other features: inbound texts, automatic retries, broadcasts. */
describe("events from inbound texts, retries and broadcasts", () => {
  let ts: TestServer;
  let secret = "";
  const got: Array<{ type: string; data: any }> = [];
  const rx = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.text();
      got.push(new Webhook(secret).verify(body, Object.fromEntries(req.headers)) as any);
      return new Response("ok");
    },
  });
  const ofType = (t: string) => got.filter((e) => e.type === t);
  beforeAll(async () => {
    ts = await startTestServer({ allowPrivateWebhookUrls: true });
    const ep = await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", json: { url: `http://127.0.0.1:${rx.port}/`, events: ["*"], allowInsecure: true } }), 201);
    secret = ep.data.endpoint.secret;
  });
  afterAll(async () => {
    await ts.stop();
    rx.stop(true);
  });

  test("an inbound text: inbound.received with the message and contact; contact.created for a new number", async () => {
    const r = await fetch(`${ts.base}/messages/${ts.adminKey}/inbound`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ from: "+14155550111", body: "Is the shop open?", receivedAt: new Date().toISOString() }),
    });
    const b = await expectStatus(r, 201);
    const e = await waitFor("inbound.received", () => ofType("inbound.received")[0]);
    expect(e.data.message).toMatchObject({ id: b.data.message.id, from: "+14155550111", body: "Is the shop open?" });
    expect(e.data.contact).toMatchObject({ phoneNumber: "+14155550111", status: "responded" });
    await waitFor("contact.created", () => ofType("contact.created").find((c) => c.data.contact.phoneNumber === "+14155550111"));
  });

  test("STOP: contact.opted_out, message.cancelled for what was queued, message.queued for the confirmation; START: contact.opted_in", async () => {
    const m = await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550131", content: "promo" } }), 201);
    const inbound = (body: string) =>
      fetch(`${ts.base}/messages/${ts.adminKey}/inbound`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ from: "+14155550131", body, receivedAt: new Date().toISOString() }),
      });
    await expectStatus(await inbound("STOP"), 201);
    const out = await waitFor("contact.opted_out", () => ofType("contact.opted_out").find((e) => e.data.contact.phoneNumber === "+14155550131"));
    expect(out.data.contact.optedOut).toBe(true);
    await waitFor("message.cancelled", () => ofType("message.cancelled").find((e) => e.data.message.id === m.data.messageId));
    await waitFor("confirmation queued", () => ofType("message.queued").find((e) => e.data.message.recipientPhone === "+14155550131" && e.data.message.id !== m.data.messageId));
    await expectStatus(await inbound("STOP"), 201); // a second STOP changes nothing
    await expectStatus(await inbound("START"), 201);
    const back = await waitFor("contact.opted_in", () => ofType("contact.opted_in").find((e) => e.data.contact.phoneNumber === "+14155550131"));
    expect(back.data.contact.optedOut).toBe(false);
    expect(ofType("contact.opted_out").filter((e) => e.data.contact.phoneNumber === "+14155550131")).toHaveLength(1);
  });

  test("a transient failure re-queues (message.queued); the final one is message.failed", async () => {
    const m = await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550112", content: "hello", maxAttempts: 2 } }), 201);
    const id = m.data.messageId;
    await expectStatus(await ts.api(`/messages/${id}/status`, { method: "PUT", json: { status: "failed", failureReason: "no service" } }), 200);
    await waitFor("re-queued", () => ofType("message.queued").filter((e) => e.data.message.id === id).length >= 2);
    expect(ofType("message.failed").some((e) => e.data.message.id === id)).toBe(false);
    const requeued = ofType("message.queued").filter((e) => e.data.message.id === id)[1];
    expect(requeued.data.message.retryCount).toBe(1);
    await expectStatus(await ts.api(`/messages/${id}/status`, { method: "PUT", json: { status: "failed", failureReason: "no service" } }), 200);
    const failed = await waitFor("message.failed", () => ofType("message.failed").find((e) => e.data.message.id === id));
    expect(failed.data.message).toMatchObject({ status: "failed", failureReason: "no service" });
  });

  test("a broadcast: message.queued per recipient; cancelling: message.cancelled per message", async () => {
    for (const p of ["+14155550121", "+14155550122", "+14155550123"]) await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: p, tags: ["vip"] } }), 201);
    const b = await expectStatus(
      await ts.api("/broadcasts", { method: "POST", json: { name: "Sale", content: "Sale today", segment: { tags: ["vip"] }, scheduledFor: new Date(Date.now() + 3_600_000).toISOString() } }),
      202,
    );
    const ids = await waitFor("3 queued", () => {
      const q = ofType("message.queued").filter((e) => e.data.message.metadata?.broadcastId === b.data.broadcastId);
      return q.length === 3 ? q.map((e) => e.data.message.id) : undefined;
    });
    await expectStatus(await ts.api(`/broadcasts/${b.data.broadcastId}/cancel`, { method: "POST" }), 200);
    const cancelled = await waitFor("3 cancelled", () => {
      const c = ofType("message.cancelled").filter((e) => ids.includes(e.data.message.id));
      return c.length === 3 ? c : undefined;
    });
    for (const c of cancelled) expect(c.data.message.status).toBe("cancelled");
  });
});

/**
 * Every change to a contact's fields emits one contact.updated carrying the contact as it ends
 * up (docs/api-decisions.md, "The phone path, round two"). Counted in the outbox (the events
 * table), where each emitted event is written in the change's own transaction.
 */
describe("contact.updated for every change of a contact", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({ allowPrivateWebhookUrls: true });
    sink = await eventSink(ts);
  });
  afterAll(async () => {
    sink.stop();
    await ts.stop();
  });
  let sink: EventSink;
  /** A contact's events, as the owner's receiver got them, in the order they were made. */
  const eventsOf = async (contactId: string) =>
    (await sink.events())
      .filter((e) => e.type.startsWith("contact.") && e.data.contact?.id === contactId)
      .map((e) => ({ type: e.type, contact: e.data.contact }));

  test("opting out or in through the API: the specific event and one contact.updated, also with other fields in the same request", async () => {
    const c = (await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550141" } }), 201)).data.contact;
    await expectStatus(await ts.api(`/contacts/${c.id}`, { method: "PUT", json: { optedOut: true } }), 200);
    await expectStatus(await ts.api(`/contacts/${c.id}`, { method: "PUT", json: { firstName: "Di", optedOut: false } }), 200);
    const seen = await eventsOf(c.id);
    expect(seen.map((e) => e.type)).toEqual(["contact.created", "contact.opted_out", "contact.updated", "contact.opted_in", "contact.updated"]);
    expect(seen[2].contact.optedOut).toBe(true);
    expect(seen[4].contact).toMatchObject({ optedOut: false, firstName: "Di" });
  });

  test("a contact created opted out: contact.created shows it opted out", async () => {
    const c = (await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550142", optedOut: true } }), 201)).data.contact;
    const seen = await eventsOf(c.id);
    expect(seen.map((e) => e.type)).toEqual(["contact.created", "contact.opted_out"]);
    expect(seen[0].contact.optedOut).toBe(true);
  });

  test("an import row that changes a contact and opts it out: one contact.updated after both", async () => {
    const c = (await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550143" } }), 201)).data.contact;
    const csv = "phoneNumber,firstName,optedOut\n+14155550143,Ed,true\n+14155550144,New,true\n";
    await expectStatus(await ts.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } }), 200);
    const seen = await eventsOf(c.id);
    expect(seen.map((e) => e.type)).toEqual(["contact.created", "contact.opted_out", "contact.updated"]);
    expect(seen[2].contact).toMatchObject({ firstName: "Ed", optedOut: true });
    const fresh = (await expectStatus(await ts.api("/contacts?search=4155550144"), 200)).data.contacts[0];
    const created = await eventsOf(fresh.id);
    expect(created.map((e) => e.type)).toEqual(["contact.created", "contact.opted_out"]);
    expect(created[0].contact.optedOut).toBe(true);
  });

  test("a form submission for an opted-out number queues no text but still announces the contact's change", async () => {
    const c = (await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550146", optedOut: true } }), 201)).data.contact;
    const form = (await expectStatus(await ts.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    const r = await fetch(`${ts.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550146", firstName: "Flo" }) });
    expect((await expectStatus(r, 200)).data.messageId).toBeNull();
    const seen = await eventsOf(c.id);
    expect(seen.map((e) => e.type)).toEqual(["contact.created", "contact.opted_out", "contact.updated"]);
    expect(seen[2].contact.firstName).toBe("Flo");
  });

  test("a sent status (single and bulk): one contact.updated with messageCount and lastContactedAt", async () => {
    const c = (await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550145" } }), 201)).data.contact;
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await expectStatus(await ts.api("/messages", { method: "POST", json: { contactId: c.id, content: `hi ${i}` } }), 201)).data.messageId);
    const sentAt = new Date().toISOString();
    await expectStatus(await ts.api(`/messages/${ids[0]}/status`, { method: "PUT", json: { status: "sent", sentAt } }), 200);
    await expectStatus(await ts.api(`/messages/${ids[0]}/status`, { method: "PUT", json: { status: "sent", sentAt } }), 200);
    await expectStatus(await ts.api("/messages/bulk", { method: "PUT", json: { messageIds: [ids[1]], status: "sent", sentAt } }), 200);
    const updates = (await eventsOf(c.id)).filter((e) => e.type === "contact.updated");
    expect(updates.map((e) => [e.contact.messageCount, e.contact.status, e.contact.lastContactedAt])).toEqual([
      [1, "contacted", sentAt],
      [2, "contacted", sentAt],
    ]);
  });
});
