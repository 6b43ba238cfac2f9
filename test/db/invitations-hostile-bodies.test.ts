/**
 * Hostile bodies on setup, invitations and passwords write nothing, counted in the file: no request
 * lists the open invitations, so whether a refused invitation left a row is a database fact. Moved
 * from the API test (test/api/people.test.ts keeps the answers and the people list).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { browser, invite, OWNER, postJson, sessionOf, setupLink, setupOwner } from "../helpers/people";
import { listPeople } from "../helpers/accounts";

describe("hostile bodies on setup, invitations and passwords", () => {
  let ts: TestServer;
  let owner: Awaited<ReturnType<typeof setupOwner>>;
  beforeAll(async () => {
    ts = await startTestServer({ authFailuresPerMinute: 1000 });
    owner = await setupOwner(ts);
  });
  afterAll(() => ts.stop());

  test("every bad body is a 4xx in the envelope, never a 500, and writes nothing", async () => {
    const d = ts.running.deps;
    // No request lists the open invitations: they are counted in SQL.
    const invitations = () => (d.sqlite.query("SELECT count(*) AS n FROM invitations").get() as { n: number }).n;
    const people = async () => (await listPeople(ts)).length;
    const before = { invitations: invitations(), people: await people() };
    const o = browser(ts, owner);
    const bad: unknown[] = [null, [], "x", 42, { role: "staff" }, { role: "staff", email: 7 }, { role: "staff", email: "a".repeat(10_000) + "@x.example" }, { role: ["staff"], email: "a@b.example" }, { role: "staff", email: { $gt: "" } }];
    for (const json of bad) {
      const r = await o("/invitations", { method: "POST", json });
      expect(r.status, JSON.stringify(json).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(((await r.json()) as any).status).toBe("error");
    }
    const token = await invite(ts, owner, "staff", "hostile@shop.example");
    const before2 = { invitations: invitations(), people: await people() };
    for (const json of [{ token }, { token, name: "N" }, { token, name: { a: 1 }, password: "green-teapot-77" }, { token: 5, name: "N", password: "green-teapot-77" }, { token: "t".repeat(5_000), name: "N", password: "green-teapot-77" }, { token, name: "N", password: "p".repeat(100_000) }]) {
      const r = await postJson(ts, "/invitations/accept", json);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    for (const json of [{}, { currentPassword: 1, newPassword: "x" }, { currentPassword: "c".repeat(100_000), newPassword: "purple-lantern-88" }, { currentPassword: ["a"], newPassword: "purple-lantern-88" }]) {
      const r = await o("/session/password", { method: "PUT", json });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    for (const json of [{ token: null }, { token: "x".repeat(43), businessName: 5 }, { token: { a: 1 } }]) {
      const r = await postJson(ts, "/setup", json);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    expect(before2.invitations).toBe(before.invitations + 1);
    expect({ invitations: invitations(), people: await people() }).toEqual(before2);
    // The owner's password is still the one set up; the refused invitation still works once.
    await sessionOf(await postJson(ts, "/session", { email: OWNER.email, password: OWNER.password }));
    await sessionOf(await postJson(ts, "/invitations/accept", { token, name: "Finally", password: "green-teapot-77" }));
  }, 180_000);
});
