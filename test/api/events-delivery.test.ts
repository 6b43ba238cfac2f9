import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../helpers/server";
import { startReceiver, waitFor } from "../helpers/event-receiver-client";

/** Short waits between attempts so a test sees retries; the production schedule is unit-tested. */
const SHORT_SCHEDULE = [50, 50, 50, 50, 50, 50, 50];

describe("a receiver that verifies with standardwebhooks and answers 500 to the first two tries", () => {
  let ts: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    ts = await startTestServer({ allowPrivateWebhookUrls: true, eventRetryScheduleMs: SHORT_SCHEDULE });
  });
  afterAll(async () => {
    await ts.stop();
    await receiver.stop();
  });

  test("every event arrives verified, exactly once after dedupe, on the third try", async () => {
    const created = await expectStatus(
      await ts.api("/webhook-endpoints", { method: "POST", json: { url: receiver.url, events: ["*"], allowInsecure: true, description: "CRM" } }),
      201,
    );
    const endpoint = created.data.endpoint;
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await receiver.configure({ secret: endpoint.secret, failFirst: 2 });

    const form = await expectStatus(await ts.api("/forms", { method: "POST", json: formBody() }), 201);
    const messageIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await expectStatus(
        await fetch(`${ts.base}/forms/${form.data.form.id}/webhook`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ phoneNumber: `+1415555${String(1000 + (i % 15)).padStart(4, "0")}`, firstName: `P${i}` }),
        }),
        200,
      );
      messageIds.push(r.data.messageId);
    }
    // Status changes: sent, failed (a permanent reason: no automatic retry), cancelled.
    await expectStatus(await ts.api(`/messages/${messageIds[0]}/status`, { method: "PUT", json: { status: "sent", sentAt: new Date().toISOString() } }), 200);
    await expectStatus(await ts.api(`/messages/${messageIds[1]}/status`, { method: "PUT", json: { status: "failed", failureReason: "invalid-phone" } }), 200);
    await expectStatus(await ts.api(`/messages/${messageIds[2]}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);

    // What was announced, as the endpoint's delivery log lists it (the fan-out runs after the commit).
    const events = await waitFor("every event logged", async () => {
      const l = await expectStatus(await ts.api(`/webhook-endpoints/${endpoint.id}/deliveries?limit=100`), 200);
      return l.data.pagination.total >= 64 ? (l.data.deliveries as any[]).map((d) => ({ id: d.eventId as string, type: d.eventType as string })) : undefined;
    });
    // 20 × (contact.created|updated + message.queued + form.submission) + 3 status changes
    // + the contact.updated of the sent one (messageCount, lastContactedAt)
    expect(events.length).toBe(64);
    const types = new Set(events.map((e) => e.type));
    expect([...types].sort()).toEqual(["contact.created", "contact.updated", "form.submission", "message.cancelled", "message.failed", "message.queued", "message.sent"]);

    const state = await waitFor("every event accepted", async () => {
      const s = await receiver.state();
      return s.accepted.length >= events.length ? s : undefined;
    });
    expect(state.invalid).toBe(0);
    expect([...state.accepted].sort()).toEqual(events.map((e) => e.id).sort());
    expect(new Set(state.accepted).size).toBe(state.accepted.length);
    for (const e of events) expect(state.tries[e.id]).toBe(3);

    // The delivery log agrees: delivered on the third attempt, the last answer kept.
    const log = await waitFor("log settled", async () => {
      const l = await expectStatus(await ts.api(`/webhook-endpoints/${endpoint.id}/deliveries?limit=100`), 200);
      return l.data.deliveries.every((d: any) => d.status === "delivered") ? l : undefined;
    });
    expect(log.data.pagination.total).toBe(64);
    for (const d of log.data.deliveries) {
      expect(d.attempts).toBe(3);
      expect(d.lastResponseCode).toBe(200);
      expect(d.lastResponseBody).toBe("ok");
      expect(d.nextAttemptAt).toBeNull();
    }
    const sent = log.data.deliveries.find((d: any) => d.eventType === "message.sent");
    const payload = state.bodies[sent.eventId];
    expect(payload.type).toBe("message.sent");
    expect(payload.data.message.id).toBe(messageIds[0]);
    expect(payload.data.message.status).toBe("sent");

    // A delivery's row is readable as soon as its batch commits; the counter moves once the batch
    // is on disk (the dispatcher counts after the group commit's flush returns), a moment later.
    const metrics = await waitFor("every delivery counted", async () => {
      const text = await (await ts.api("/../metrics")).text();
      return /textwire_event_deliveries_total\{result="delivered"\} 64\b/.test(text) ? text : undefined;
    });
    expect(metrics).toMatch(/textwire_event_deliveries_total\{result="delivered"\} 64/);
    expect(metrics).toMatch(/textwire_event_deliveries_total\{result="retrying"\} 128/);
    expect(metrics).toMatch(/textwire_events_oldest_pending_seconds 0/);
  }, 60_000);
});
