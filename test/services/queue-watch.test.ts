/**
 * The queue watcher (src/services/queue-watch.ts) on a running server, read inside: which accounts
 * its check finds stuck is its return value, asked at once at the test's clock (its timer does not
 * follow the test). Whether the watcher hears each way a phone asks for work is what is checked.
 */
import { describe, expect, test } from "bun:test";
import { expectStatus, startTestServer } from "../helpers/server";
import { insertMessage } from "../helpers/fixtures";
import { SmsGateEmulator } from "../helpers/smsgate-emulator";
import type { QueueWatch } from "../../src/services/queue-watch";

describe("the queue watcher hears every way of asking for work", () => {
  test("the mobile API, a key's POST /v1/messages/next and a recipe's long-poll each end a stuck spell", async () => {
    let offset = 0;
    const clock = () => Date.now() + offset;
    const s = await startTestServer({}, { clock });
    try {
      const phone = new SmsGateEmulator({ base: `${s.url}/api/mobile/v1` });
      await phone.register((await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token);
      const watch = s.running.deps.lifecycle.find((l) => l.name === "queue-watch") as QueueWatch;
      const asks: Array<[string, () => Promise<Response>]> = [
        ["mobile GET", () => fetch(`${s.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${phone.token}` } })],
        ["POST next", () => s.api("/messages/next", { method: "POST", json: { limit: 1 } })],
        ["recipe long-poll", () => s.api("/messages/next?wait=0", { headers: { "X-Device-Id": "kitchen-phone" } })],
      ];
      for (const [name, ask] of asks) {
        // Quiet for longer than --stuck-after (10 min) with a message due: stuck.
        offset += 11 * 60_000;
        insertMessage(s.running.deps, s.accountId, { scheduledFor: new Date(clock() - 1_000).toISOString() });
        expect([name, watch.check(clock())]).toEqual([name, [s.accountId]]);
        // The rate of one phone is not the point here: a message is still due after the ask.
        insertMessage(s.running.deps, s.accountId, { scheduledFor: new Date(clock() - 1_000).toISOString() });
        expect((await ask()).status).toBeLessThan(300);
        expect([name, watch.check(clock())]).toEqual([name, []]);
      }
    } finally {
      await s.stop();
    }
  });
});
