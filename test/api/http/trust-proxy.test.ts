import { describe, expect, test } from "bun:test";
import { withServer, expectStatus, formBody, type TestServer } from "../../helpers/server";

/**
 * Forwarded headers are honoured only from a configured proxy: a client reaching the server
 * directly cannot dodge the failed sign-in limit by writing its own X-Forwarded-For
 * (docs/api-decisions.md, "Hostile input, round two: bodies, paging and proxies").
 */
const LIMIT = 5;
const WRONG_KEY = "txwire_sk_" + "x".repeat(40);

/** A wrong key on the API and a wrong key at the dashboard sign-in, each from a new forwarded address. */
async function wrongKey(s: TestServer, i: number, how: "api" | "session") {
  const headers = { "X-Forwarded-For": `198.51.100.${i % 250}, 203.0.113.${i % 250}` };
  return how === "api"
    ? s.api("/forms", { key: WRONG_KEY, headers })
    : fetch(`${s.base}/session`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ apiKey: WRONG_KEY }) });
}

describe("a direct client (not the configured proxy) writing X-Forwarded-For", () => {
  for (const how of ["api", "session"] as const) {
    test(`${how}: its own address is limited: 429 after ${LIMIT} wrong keys, whatever address it forwards`, async () => {
      await withServer(
        async (s) => {
          // Each refused sign-in is answered after a pause (src/limits/tarpit.ts): a few past the limit suffice.
          const TRIES = LIMIT + 6;
          const statuses: number[] = [];
          for (let i = 1; i <= TRIES; i++) statuses.push((await wrongKey(s, i, how)).status);
          expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
          expect(statuses.slice(LIMIT)).toEqual(Array(TRIES - LIMIT).fill(429));
          const last = await expectStatus(await wrongKey(s, 99, how), 429);
          expect(last).toMatchObject({ status: "error", code: "RATE_LIMIT_EXCEEDED" });
        },
        { trustProxy: true, trustedProxies: ["10.0.0.1"], authFailuresPerMinute: LIMIT },
      );
    });
  }

  test("its X-Forwarded-Proto and -Host are ignored too: no redirect, the webhookUrl names the real host", async () => {
    await withServer(
      async (s) => {
        const res = await s.api("/forms", { redirect: "manual", headers: { "X-Forwarded-Proto": "http", "X-Forwarded-Host": "evil.example" } });
        expect(res.status).toBe(200);
        const made = await expectStatus(
          await s.api("/forms", { method: "POST", json: formBody(), headers: { "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example" } }),
          201,
        );
        expect(made.data.form.webhookUrl).toStartWith(`${s.url}/v1/forms/`);
      },
      { trustProxy: true, trustedProxies: ["10.0.0.1", "fd00::/8"] },
    );
  });
});

describe("through a trusted proxy (true: this machine)", () => {
  test("the address the proxy reports is the one limited; another client behind it is not", async () => {
    await withServer(
      async (s) => {
        const from = (ip: string) => s.api("/forms", { key: WRONG_KEY, headers: { "X-Forwarded-For": `6.6.6.6, ${ip}` } });
        for (let i = 0; i < LIMIT; i++) expect((await from("198.51.100.1")).status).toBe(401);
        expect((await from("198.51.100.1")).status).toBe(429);
        // The same client writing a different left-hand entry is still the same client.
        expect((await s.api("/forms", { key: WRONG_KEY, headers: { "X-Forwarded-For": "1.1.1.1, 198.51.100.1" } })).status).toBe(429);
        // A different client behind the proxy has its own allowance.
        expect((await from("198.51.100.2")).status).toBe(401);
        // Forwarded proto and host count from the proxy.
        const res = await s.api("/forms", { redirect: "manual", headers: { "X-Forwarded-Proto": "http", "X-Forwarded-Host": "sms.example.com" } });
        expect(res.status).toBe(308);
        expect(res.headers.get("location")).toBe("https://sms.example.com/v1/forms");
      },
      { trustProxy: true, authFailuresPerMinute: LIMIT },
    );
  });

  test("a listed range that includes this machine works the same way", async () => {
    await withServer(
      async (s) => {
        for (let i = 0; i < LIMIT; i++) expect((await s.api("/forms", { key: WRONG_KEY, headers: { "X-Forwarded-For": "198.51.100.1" } })).status).toBe(401);
        expect((await s.api("/forms", { key: WRONG_KEY, headers: { "X-Forwarded-For": "198.51.100.1" } })).status).toBe(429);
        expect((await s.api("/forms", { key: WRONG_KEY, headers: { "X-Forwarded-For": "198.51.100.3" } })).status).toBe(401);
      },
      { trustProxy: true, trustedProxies: ["10.0.0.0/8", "127.0.0.0/24"], authFailuresPerMinute: LIMIT },
    );
  });
});
