import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";

let s: TestServer;
beforeAll(async () => (s = await startTestServer()));
afterAll(() => s.stop());

test("texts a phone received are phone traffic: never refused by the key's API limit (a STOP is never lost)", async () => {
  const d = s.running.deps;
  d.sqlite.query("UPDATE accounts SET api_limit_per_hour = 1 WHERE id = ?").run(s.accountId);
  await expectStatus(await s.api("/forms"), 200); // the one API request this hour
  expect((await expectStatus(await s.api("/forms"), 429)).code).toBe("RATE_LIMIT_EXCEEDED");
  for (let i = 0; i < 3; i++) {
    const r = await s.api("/messages/inbound", { method: "POST", json: { from: `+1201555010${i}`, body: i === 2 ? "STOP" : "hello", receivedAt: new Date().toISOString() } });
    await expectStatus(r, 201);
  }
  expect((d.sqlite.query("SELECT COUNT(*) AS n FROM inbound_messages").get() as any).n).toBe(3);
});
