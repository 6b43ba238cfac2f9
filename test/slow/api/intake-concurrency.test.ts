/**
 * The applier (its own connection) and the API's transactions on the main connection write the
 * same database at the same time: no request may fail on the other's lock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ webhookLimitPerMinute: 1_000_000 });
});
afterAll(async () => {
  await s.stop();
});

describe("webhooks and API writes at once", () => {
  test("status changes on just-acknowledged messages while the applier works: no 500, every change applied", async () => {
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { timezone: "UTC", duplicateWindowMinutes: 0, recipientLimitPerDay: null } }) }), 201)).data.form;
    const acked: string[] = [];
    const failures: string[] = [];
    let n = 0;
    let posting = true;
    const poster = async () => {
      while (n < 600) {
        const i = n++;
        const res = await fetch(`${s.base}/forms/${form.id}/webhook`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ phoneNumber: `+1415556${String(1000 + (i % 3000)).padStart(4, "0")}`, firstName: `N${i}` }),
        });
        if (res.status === 200) acked.push(((await res.json()) as any).data.messageId);
        else failures.push(`webhook ${res.status} ${await res.text()}`);
      }
    };
    const cancelled: string[] = [];
    const canceller = async () => {
      while (posting || acked.length > 0) {
        const id = acked.shift();
        if (!id) {
          await Bun.sleep(1);
          continue;
        }
        const res = await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "cancelled" } });
        if (res.status === 200) cancelled.push(id);
        else failures.push(`cancel ${res.status} ${await res.text()}`);
      }
    };
    const cancellers = Array.from({ length: 4 }, canceller);
    await Promise.all(Array.from({ length: 12 }, poster));
    posting = false;
    await Promise.all(cancellers);
    expect(failures).toEqual([]);
    expect(cancelled.length).toBe(600);
    const list = await expectStatus(await s.api(`/messages?formId=${form.id}&status=cancelled&limit=1`), 200);
    expect(list.data.pagination.total).toBe(600);
  }, 120_000);
});

describe("the checkpoint thread's write gate", () => {
  test("while it is closed the applier starts no batch; once open it applies what waits", async () => {
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { timezone: "UTC", duplicateWindowMinutes: 0 } }) }), 201)).data.form;
    const { intake, writeGate, writer } = s.running.deps;
    expect(intake.barrier()).toBeNull();
    // The gate closes right after the webhook's commit, before the applier is woken (the group
    // commit itself holds its flushes while the gate is closed).
    const closeAfterCommit = (wanted: boolean) => {
      if (!wanted) Atomics.store(new Int32Array(writeGate.shared), 0, 1);
    };
    writer.lockListeners.push(closeAfterCommit);
    try {
      const res = await fetch(`${s.base}/forms/${form.id}/webhook`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ phoneNumber: "+14155557001", firstName: "Gate" }),
      });
      expect(res.status).toBe(200);
      writer.lockListeners.splice(writer.lockListeners.indexOf(closeAfterCommit), 1);
      await Bun.sleep(300);
      expect(intake.lag()).toBe(1);
      expect(intake.barrier()).not.toBeNull();
    } finally {
      if (writer.lockListeners.includes(closeAfterCommit)) writer.lockListeners.splice(writer.lockListeners.indexOf(closeAfterCommit), 1);
      writeGate.opened();
    }
    await intake.barrier();
    expect(intake.lag()).toBe(0);
  }, 30_000);
});
