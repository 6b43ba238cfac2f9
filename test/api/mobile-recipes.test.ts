import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertMessage, iso } from "../helpers/fixtures";
import { messageOf, raiseApiLimits } from "../helpers/reads";
import { operatorKey, setTimeZone, updateAccount } from "../helpers/accounts";

describe("key-polling recipes (X-Device-Id)", () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startTestServer({ deviceLimitPerMinute: 5 });
    // A key with a tiny hourly API limit: phone traffic must not touch it.
    updateAccount(s, s.accountId, { apiLimitPerHour: 2, apiBurstPerMinute: 2 });
    key = operatorKey(s, s.accountId, "standard_access").apiKey;
  });
  afterAll(() => s.stop());

  const next = (headers: Record<string, string>) =>
    fetch(`${s.base}/messages/${key}/next`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify({ limit: 1 }) });
  const report = (id: string, json: unknown, headers: Record<string, string> = {}) =>
    fetch(`${s.base}/messages/${key}/${id}/status`, { method: "PUT", headers: { "Content-Type": "application/json", "X-Device-Id": "macrodroid-1", ...headers }, body: JSON.stringify(json) });

  test("a phone is registered on first poll with X-Device-Name, limited by its own limiter, and its reports are never refused", async () => {
    const d = s.running.deps;
    const now = Date.now();
    const ids = Array.from({ length: 8 }, (_, i) => insertMessage(d, s.accountId, { createdAt: iso(now - 1000 + i), scheduledFor: iso(now - 1000) }));
    const headers = { "X-Device-Id": "macrodroid-1", "X-Device-Name": "Shop phone" };
    const got: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await expectStatus(await next(headers), 200);
      got.push(...r.data.messages.map((m: any) => m.id));
      expect(r.data.messages[0].leaseToken).toBeString();
    }
    // Five requests: past the key's hourly limit of 2, within the device's 5 per minute.
    expect(got.length).toBe(5);
    const refused = await expectStatus(await next(headers), 429);
    expect(refused.code).toBe("RATE_LIMIT_EXCEEDED");
    // (The reads back below are the owner's: the account's limit is raised for them.)
    raiseApiLimits(s);
    // Reports still go through, unpadded sentAt included.
    for (const id of got.slice(0, 3)) await expectStatus(await report(id, { status: "sent", sentAt: "2026-11-5T9:3:7" }), 200);
    await expectStatus(await report(got[3], { status: "failed", failureReason: "invalid-phone" }), 200);
    const m = (await expectStatus(await s.api(`/messages/${got[0]}`), 200)).data.message;
    expect(m.sentAt).toBe("2026-11-05T09:03:07.000Z");
    const held = (await expectStatus(await s.api(`/messages/${got[4]}`), 200)).data.timeline.at(-1);
    expect(held).toMatchObject({ kind: "leased", deviceId: "macrodroid-1" });
    const devices = (await expectStatus(await s.api("/devices"), 200)).data.devices;
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ kind: "recipe", name: "Shop phone", sentToday: 3, failedToday: 1, online: true });
    void ids;
  });

  test("a zone-less sentAt is read in the account's time zone", async () => {
    const d = s.running.deps;
    setTimeZone(s, s.accountId, "Europe/Berlin");
    const id = insertMessage(d, s.accountId, { scheduledFor: iso(Date.now() - 10) });
    await expectStatus(await report(id, { status: "sent", sentAt: "2026-11-23T10:00" }, { "X-Device-Id": "tasker-2" }), 200);
    expect((await expectStatus(await s.api(`/messages/${id}`), 200)).data.message.sentAt).toBe("2026-11-23T09:00:00.000Z");
    setTimeZone(s, s.accountId, "UTC");
    const other = insertMessage(d, s.accountId, { scheduledFor: iso(Date.now() - 10) });
    await expectStatus(await report(other, { status: "sent", sentAt: "not a time" }, { "X-Device-Id": "tasker-2" }), 400);
  });
});

describe("offline release and /health", () => {
  test("a recipe silent for --device-offline-after loses its leases at once; /health says stuck when nobody asks for work", async () => {
    const s = await startTestServer({ deviceOfflineAfterMs: 1_000, stuckAfterMs: 1_000 });
    try {
      const d = s.running.deps;
      const id = insertMessage(d, s.accountId, { scheduledFor: iso(Date.now() - 5_000), createdAt: iso(Date.now() - 5_000) });
      const r = await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 1 }, headers: { "X-Device-Id": "tasker-1" } }), 200);
      expect(r.data.messages[0].id).toBe(id);
      let h = await expectStatus(await fetch(`${s.url}/health`), 200);
      expect(h.devicesOnline).toBe(1);
      expect(h.oldestDueSeconds).toBeGreaterThanOrEqual(4);
      await Bun.sleep(2_600);
      const released = (await messageOf(s, id))!;
      expect(released.stage).toBe("queued");
      expect(released.timeline.filter((e: any) => e.kind === "lease_expired")).toHaveLength(1);
      h = await expectStatus(await fetch(`${s.url}/health`), 200);
      expect(h).toMatchObject({ status: "ok", devicesOnline: 0, queue: "stuck" });
      const again = await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 1 }, headers: { "X-Device-Id": "tasker-2" } }), 200);
      expect(again.data.messages[0].id).toBe(id);
      h = await expectStatus(await fetch(`${s.url}/health`), 200);
      expect(h.queue).toBe("ok");
    } finally {
      await s.stop();
    }
  });
});
