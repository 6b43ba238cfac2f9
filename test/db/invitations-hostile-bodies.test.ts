/**
 * Hostile invitation bodies write no invitation row, counted in the file: no request lists the open
 * invitations, so whether a refused invitation left a row is a database fact. The hostile bodies'
 * answers, on setup and passwords too, and the people list are test/api/people.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server";
import { browser, invite, postJson, sessionOf, setupOwner } from "../helpers/people";

describe("hostile invitation bodies", () => {
  let ts: TestServer;
  let owner: Awaited<ReturnType<typeof setupOwner>>;
  beforeAll(async () => {
    ts = await startTestServer({ authFailuresPerMinute: 1000 });
    owner = await setupOwner(ts);
  });
  afterAll(() => ts.stop());

  test("a refused invitation body writes no invitation row, and a refused acceptance leaves the invitation", async () => {
    // No request lists the open invitations: they are counted in SQL. The answers themselves (a
    // 4xx in the envelope, never a 500) and the people list are test/api/people.test.ts's.
    const invitations = () => (ts.running.deps.sqlite.query("SELECT count(*) AS n FROM invitations").get() as { n: number }).n;
    const before = invitations();
    const o = browser(ts, owner);
    const bad: unknown[] = [null, [], "x", 42, { role: "staff" }, { role: "staff", email: 7 }, { role: "staff", email: "a".repeat(10_000) + "@x.example" }, { role: ["staff"], email: "a@b.example" }, { role: "staff", email: { $gt: "" } }];
    for (const json of bad) expect((await o("/invitations", { method: "POST", json })).status).toBeGreaterThanOrEqual(400);
    expect(invitations()).toBe(before);
    const token = await invite(ts, owner, "staff", "hostile@shop.example");
    expect(invitations()).toBe(before + 1);
    for (const json of [{ token }, { token, name: "N" }, { token, name: { a: 1 }, password: "green-teapot-77" }, { token: 5, name: "N", password: "green-teapot-77" }, { token: "t".repeat(5_000), name: "N", password: "green-teapot-77" }, { token, name: "N", password: "p".repeat(100_000) }]) {
      expect((await postJson(ts, "/invitations/accept", json)).status).toBeGreaterThanOrEqual(400);
    }
    expect(invitations()).toBe(before + 1);
    // The refused invitation still works once.
    await sessionOf(await postJson(ts, "/invitations/accept", { token, name: "Finally", password: "green-teapot-77" }));
  }, 180_000);
});
