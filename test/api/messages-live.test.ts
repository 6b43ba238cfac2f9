/**
 * The services announce their changes (src/lib/changes.ts) and the observers listen: the
 * dashboard's live feed hears a change whatever path made it — not only the /v1 paths a URL
 * match once listed. (The queue watcher hearing every way a phone asks for work:
 * test/services/queue-watch.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { insertMessage } from "../helpers/fixtures";
import { SmsGateEmulator } from "../helpers/smsgate-emulator";

/** An open /v1/live/messages stream and a reader that waits for a pattern (10 s at most). */
async function liveStream(s: TestServer) {
  const ctrl = new AbortController();
  const res = await fetch(`${s.base}/live/messages`, { headers: { Authorization: `Bearer ${s.adminKey}` }, signal: ctrl.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = "";
  const readUntil = async (re: RegExp, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!re.test(text)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no event: " + JSON.stringify(text));
      const next = await Promise.race([reader.read(), Bun.sleep(left).then(() => null)]);
      if (next === null) continue;
      if (next.done) throw new Error("stream ended: " + text);
      text += new TextDecoder().decode(next.value);
    }
  };
  await readUntil(/: connected/);
  return {
    readUntil,
    clear: () => void (text = ""),
    close: () => ctrl.abort(),
  };
}

describe("the live feed hears changes made outside the /v1 message routes", () => {
  let s: TestServer;
  let phone: SmsGateEmulator;
  beforeAll(async () => {
    s = await startTestServer();
    phone = new SmsGateEmulator({ base: `${s.url}/api/mobile/v1` });
    const reg = await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201);
    await phone.register(reg.data.token);
  });
  afterAll(() => s.stop());

  test("a phone taking messages through the mobile API (GET /api/mobile/v1/message) tells the stream", async () => {
    const live = await liveStream(s);
    try {
      const id = insertMessage(s.running.deps, s.accountId); // straight into the store and queue: announces nothing
      const taken = await expectStatus(await fetch(`${s.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${phone.token}` } }), 200);
      expect(taken.map((m: { id: string }) => m.id)).toEqual([id]);
      await live.readUntil(/event: message\ndata: \{"source":"queue"/);
    } finally {
      live.close();
    }
  });

  test("a contact created through the API tells the stream (a contact's change shows in the message list)", async () => {
    const live = await liveStream(s);
    try {
      await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550177", firstName: "Rosa" } }), 201);
      await live.readUntil(/event: message\ndata: \{"source":"api"/);
    } finally {
      live.close();
    }
  });

  test("a phone's Sent report through the mobile API tells the stream, as the phone's", async () => {
    const id = insertMessage(s.running.deps, s.accountId);
    await expectStatus(await fetch(`${s.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${phone.token}` } }), 200);
    const live = await liveStream(s);
    try {
      const res = await fetch(`${s.url}/api/mobile/v1/message`, {
        method: "PATCH",
        headers: { Authorization: `Bearer ${phone.token}`, "Content-Type": "application/json" },
        body: JSON.stringify([{ id, state: "Sent", recipients: [], states: { Sent: new Date().toISOString() } }]),
      });
      expect(res.status).toBe(204);
      await live.readUntil(/event: message\ndata: \{"source":"device"/);
      expect((await expectStatus(await s.api(`/messages/${id}`), 200)).data.message.status).toBe("sent");
    } finally {
      live.close();
    }
  });
});

// The queue watcher hearing every way of asking for work is read inside it: test/services/queue-watch.test.ts.
