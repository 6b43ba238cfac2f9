import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../helpers/server";
import { newAccount } from "../../helpers/accounts";
import { listTotal } from "../../helpers/reads";

/** SMSGate's third-party API: auth and the error body (docs/api-decisions.md, "SMSGate third-party API"). */
let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

const basic = (login: string, password: string) => `Basic ${btoa(`${login}:${password}`)}`;
const tp = (path: string, init: RequestInit = {}) => fetch(`${ts.url}/3rdparty/v1${path}`, init);

async function expectSmsgateError(res: Response, status: number, data: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toEqual({ message: expect.any(String), code: status, data });
  expect(Number.isInteger(body.code)).toBe(true);
  expect((body.message as string).length).toBeGreaterThan(0);
}

describe("SMSGate third-party API: who may call", () => {
  test("Basic auth with the account id as login and an API key as password", async () => {
    const res = await tp("/messages", { headers: { Authorization: basic(ts.accountId, ts.adminKey) } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("0");
  });

  test("Bearer with an API key works too", async () => {
    const res = await tp("/message", { headers: { Authorization: `Bearer ${ts.adminKey}` } });
    expect(res.status).toBe(200);
  });

  test("a standard key is enough to read and send", async () => {
    const created = await ts.api("/api-keys", { method: "POST", json: { permission: "standard_access" } });
    expect(created.status).toBe(201);
    const key = ((await created.json()) as { data: { apiKey: string } }).data.apiKey;
    const res = await tp("/messages", { headers: { Authorization: basic(ts.accountId, key) } });
    expect(res.status).toBe(200);
  });

  test("no credentials: 401 in SMSGate's body, code an integer", async () => {
    await expectSmsgateError(await tp("/messages"), 401, "AUTHENTICATION_ERROR");
  });

  test("a wrong password: 401", async () => {
    await expectSmsgateError(await tp("/messages", { headers: { Authorization: basic(ts.accountId, "txwire_sk_" + "x".repeat(40)) } }), 401, "AUTHENTICATION_ERROR");
  });

  test("a real key under another login: 401 (the login must be the key's own account)", async () => {
    const res = await tp("/messages", { headers: { Authorization: basic("someone-else", ts.adminKey) } });
    await expectSmsgateError(res, 401, "AUTHENTICATION_ERROR");
  });

  test("a Basic header that is not base64 of login:password: 401, never a 500", async () => {
    for (const h of ["Basic", "Basic !!!", "Basic " + btoa("no-colon"), "Basic " + btoa(":"), "Basic " + "A".repeat(5000)]) {
      const res = await tp("/messages", { headers: { Authorization: h } });
      await expectSmsgateError(res, 401, "AUTHENTICATION_ERROR");
    }
  });
});

describe("SMSGate third-party API: errors in SMSGate's body", () => {
  test("an unknown path: 404", async () => {
    await expectSmsgateError(await tp("/nothing-here"), 404, "NOT_FOUND");
  });

  test("a method the path does not take: 405", async () => {
    await expectSmsgateError(await tp("/messages", { method: "PUT", headers: { Authorization: `Bearer ${ts.adminKey}` } }), 405, "METHOD_NOT_ALLOWED");
  });

  test("a body over the limit: 413", async () => {
    const res = await tp("/messages", {
      method: "POST",
      headers: { Authorization: `Bearer ${ts.adminKey}`, "Content-Type": "application/json", "Content-Length": String(2 * 1_048_576) },
      body: "x".repeat(2 * 1_048_576),
    });
    await expectSmsgateError(res, 413, "PAYLOAD_TOO_LARGE");
  });

  test("/v1 keeps Textwire's envelope", async () => {
    const res = await fetch(`${ts.url}/v1/forms`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { status: string }).status).toBe("error");
  });

  test("the third-party routes stay out of /v1/openapi.json", async () => {
    const doc = (await (await fetch(`${ts.url}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).some((p) => p.includes("3rdparty"))).toBe(false);
  });
});

describe("SMSGate third-party API: limits and hostile paths", () => {
  test("the key's per-minute burst answers 429 in SMSGate's body", async () => {
    const acct = newAccount(ts, { name: "Busy shop", apiBurstPerMinute: 2 });
    const auth = { Authorization: basic(acct.account.id, acct.apiKey) };
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await tp("/messages", { headers: auth });
      statuses.push(last.status);
      if (last.status === 429) break;
      await last.body?.cancel();
    }
    expect(statuses).toContain(429);
    await expectSmsgateError(last!, 429, "RATE_LIMIT_EXCEEDED");
  });

  test("the monthly quota: a send that does not fit is a 429 and queues nothing", async () => {
    const acct = newAccount(ts, { name: "Small plan", monthlyQuota: 1 });
    const headers = { Authorization: basic(acct.account.id, acct.apiKey), "Content-Type": "application/json" };
    const two = await tp("/messages", { method: "POST", headers, body: JSON.stringify({ message: "x", phoneNumbers: ["+12025550180", "+12025550181"] }) });
    await expectSmsgateError(two, 429, "QUOTA_EXCEEDED");
    /** The account's texts, as its own key's GET /v1/messages counts them. */
    const count = () => listTotal(ts, "/messages", acct.apiKey);
    expect(await count()).toBe(0);
    const one = await tp("/messages", { method: "POST", headers, body: JSON.stringify({ message: "x", phoneNumbers: ["+12025550180"] }) });
    expect(one.status).toBe(202);
    expect(await count()).toBe(1);
  });

  test("malformed and oversized ids are a 4xx, never a 500", async () => {
    const auth = { Authorization: `Bearer ${ts.adminKey}` };
    for (const [method, path] of [
      ["GET", "/messages/%ZZ"],
      ["GET", "/messages/%E0%A4%A"],
      ["DELETE", "/messages/%00"],
      ["GET", "/messages/" + "a".repeat(300)],
      ["DELETE", "/webhooks/%ZZ"],
      ["GET", "/message/..%2F..%2Fv1%2Fforms"],
    ] as const) {
      const res = await tp(path, { method, headers: auth });
      const body = (await res.json()) as { code: number };
      expect([method, path, res.status >= 400 && res.status < 500, body.code]).toEqual([method, path, true, res.status]);
    }
  });
});
