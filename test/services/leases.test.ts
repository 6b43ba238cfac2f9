/**
 * The running server's in-memory leases (src/services/leases.ts), read inside: a lease that
 * outlives its message shows in no answer (the message is gone, and nothing is queued under its
 * id), so whether a delete dropped it is checked here, on the service itself. What a tool sees of
 * the same deletes (the text gone, the queue shorter) is test/api/devices.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertForm, insertMessage } from "../helpers/fixtures";
import { raiseApiLimits } from "../helpers/reads";

const T0 = Date.parse("2026-11-20T12:00:00.000Z");

const next = async (s: TestServer, json: Record<string, unknown> = {}) =>
  (await expectStatus(await s.api("/messages/next", { method: "POST", json }), 200)).data;

describe("a leased message's lease ends with it", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({}, { clock: () => T0 });
    raiseApiLimits(s);
  });
  afterAll(() => s.stop());

  test("cancelling or deleting a leased message ends the lease", async () => {
    const d = s.running.deps;
    const id = insertMessage(d, s.accountId);
    await next(s);
    expect(d.leases.isLeased(id)).toBe(true);
    await expectStatus(await s.api(`/messages/${id}`, { method: "DELETE" }), 200);
    expect(d.leases.isLeased(id)).toBe(false);
    expect(d.queue.has(id)).toBe(false);
  });

  test("deleting the form or the contact of a leased message ends the lease too", async () => {
    const d = s.running.deps;
    const formId = insertForm(d, s.accountId);
    const contactId = insertContact(d, s.accountId);
    const viaForm = insertMessage(d, s.accountId, { formId });
    const viaContact = insertMessage(d, s.accountId, { contactId });
    expect((await next(s, { limit: 10 })).messages.map((m: any) => m.id).sort()).toEqual([viaForm, viaContact].sort());
    await expectStatus(await s.api(`/forms/${formId}`, { method: "DELETE" }), 200);
    await expectStatus(await s.api(`/contacts/${contactId}`, { method: "DELETE" }), 200);
    for (const id of [viaForm, viaContact]) {
      expect(d.leases.isLeased(id)).toBe(false);
      expect(d.queue.has(id)).toBe(false);
    }
  });
});
