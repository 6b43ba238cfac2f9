/**
 * GET /v1/messages says where each text is: queued, with the phone (a phone took it and has not
 * reported), sent, delivered (the phone reported it reached the handset).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertMessage } from "../helpers/fixtures";
import { SmsGateEmulator } from "../helpers/smsgate-emulator";
import { messageStage } from "../../src/domain/message-stage";

describe("a message's stage", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.stop());

  const stageOf = async (id: string) => {
    const list = (await expectStatus(await s.api("/messages?limit=50"), 200)).data.messages as Array<{ id: string; stage: string; status: string }>;
    return list.find((m) => m.id === id);
  };

  test("queued → with-phone → sent → delivered, as the phone reports; status keeps its four values", async () => {
    const token = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
    const p = new SmsGateEmulator({ base: `${s.url}/api/mobile/v1` });
    await p.register(token);
    const id = insertMessage(s.running.deps, s.accountId);
    expect(await stageOf(id)).toMatchObject({ status: "queued", stage: "queued" });
    await expectStatus(await fetch(`${s.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
    expect(await stageOf(id)).toMatchObject({ status: "queued", stage: "with-phone" });
    const patch = (body: unknown) =>
      fetch(`${s.url}/api/mobile/v1/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    await expectStatus(await patch([{ id, state: "Sent", recipients: [], states: { Sent: new Date().toISOString() } }]), 204);
    expect(await stageOf(id)).toMatchObject({ status: "sent", stage: "sent" });
    await expectStatus(await patch([{ id, state: "Delivered", recipients: [], states: { Delivered: new Date().toISOString() } }]), 204);
    expect(await stageOf(id)).toMatchObject({ status: "sent", stage: "delivered" });
  });

  test("the rule: failed and cancelled stay as they are; a lease only counts while queued", () => {
    expect(messageStage("queued", false, undefined)).toBe("queued");
    expect(messageStage("queued", true, undefined)).toBe("with-phone");
    expect(messageStage("sent", false, null)).toBe("sent");
    expect(messageStage("sent", false, "2026-01-01T00:00:00Z")).toBe("delivered");
    expect(messageStage("failed", true, "x")).toBe("failed");
    expect(messageStage("cancelled", false, undefined)).toBe("cancelled");
  });
});
