import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
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
