import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { updateAccount } from "../helpers/accounts";
import { listTotal, raiseApiLimits } from "../helpers/reads";

let s: TestServer;
beforeAll(async () => (s = await startTestServer()));
afterAll(() => s.stop());

test("texts a phone received are phone traffic: never refused by the key's API limit (a STOP is never lost)", async () => {
  updateAccount(s, s.accountId, { apiLimitPerHour: 1 });
  await expectStatus(await s.api("/forms"), 200); // the one API request this hour
  expect((await expectStatus(await s.api("/forms"), 429)).code).toBe("RATE_LIMIT_EXCEEDED");
  for (let i = 0; i < 3; i++) {
    const r = await s.api("/messages/inbound", { method: "POST", json: { from: `+1201555010${i}`, body: i === 2 ? "STOP" : "hello", receivedAt: new Date().toISOString() } });
    await expectStatus(r, 201);
  }
  // Read back by the owner, with the limit raised again.
  raiseApiLimits(s);
  expect(await listTotal(s, "/inbound")).toBe(3);
});
