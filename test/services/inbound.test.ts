/**
 * InboundService (src/services/inbound.ts) called directly, as the SMSGate path calls it: whether a
 * received text is written before `receive` returns, and its dedupe on `externalId`, are the
 * service's own contract with its caller, not something a request shows. What a phone or a recipe
 * posting texts sees is test/api/inbound.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server";

const T0 = Date.parse("2026-11-23T09:00:00.000Z");

let s: TestServer;
const clock = { now: T0 };
beforeAll(async () => {
  s = await startTestServer({}, { clock: () => clock.now });
});
afterAll(() => s.stop());

describe("InboundService.receive (the SMSGate path calls it directly)", () => {
  test("is durable on return and dedupes on externalId", () => {
    const inbound = s.running.deps.inbound;
    const m = inbound.receive(s.accountId, { from: "+14155550155", body: "via app", receivedAt: T0, deviceId: "dev-1", externalId: "abc" });
    expect(s.running.deps.sqlite.query("SELECT body FROM inbound_messages WHERE id = ?").get(m.id)).toEqual({ body: "via app" });
    expect(inbound.receive(s.accountId, { from: "+14155550155", body: "via app", receivedAt: T0, deviceId: "dev-1", externalId: "abc" }).id).toBe(m.id);
    expect(() => inbound.receive(s.accountId, { from: "nope", body: "x", receivedAt: T0 })).toThrow();
  });
});
