/**
 * Outbound event addresses in disguise and DNS rebinding (docs/api-decisions.md, "Hostile input,
 * round two: template names, the links rule, outbound addresses"): IPv6 forms that carry the
 * metadata or loopback address are refused when an endpoint is saved, and a delivery connects to
 * the address that was checked — the HTTP client never looks the name up a second time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { waitFor } from "../helpers/event-receiver-client";

const newEndpoint = (ts: TestServer, json: Record<string, unknown>) => ts.api("/webhook-endpoints", { method: "POST", json: { events: ["*"], ...json } });

const METADATA_FORMS = ["[2002:a9fe:a9fe::1]", "[64:ff9b::a9fe:a9fe]", "[::ffff:0:a9fe:a9fe]", "[::ffff:169.254.169.254]", "[64:ff9b::169.254.169.254]", "[2001:0:4136:e378:8000:63bf:5601:5601]"];
const LOOPBACK_FORMS = ["[2002:7f00:1::1]", "[64:ff9b::7f00:1]", "[::ffff:0:7f00:1]", "[::ffff:0:127.0.0.1]", "[::127.0.0.1]", "[2001:0:4136:e378:8000:63bf:80ff:fffe]"];

describe("saving an endpoint: addresses in disguise", () => {
  let strict: TestServer;
  let lax: TestServer;
  beforeAll(async () => {
    strict = await startTestServer();
    lax = await startTestServer({ allowPrivateWebhookUrls: true });
  });
  afterAll(async () => {
    await strict.stop();
    await lax.stop();
  });

  test("IPv6 forms of 169.254.169.254 are refused with a clear 400, even with --allow-private-webhook-urls", async () => {
    for (const ts of [strict, lax]) {
      for (const host of METADATA_FORMS) {
        const b = await expectStatus(await newEndpoint(ts, { url: `https://${host}/latest/meta-data` }), 400);
        expect([host, b.code]).toEqual([host, "WEBHOOK_URL_NOT_ALLOWED"]);
        expect(b.message).toContain("cloud metadata address");
      }
    }
    expect((await expectStatus(await strict.api("/webhook-endpoints"), 200)).data.endpoints).toEqual([]);
  });

  test("IPv6 forms of 127.0.0.1 are loopback: refused unless --allow-private-webhook-urls", async () => {
    for (const host of LOOPBACK_FORMS) {
      const b = await expectStatus(await newEndpoint(strict, { url: `https://${host}:8443/h` }), 400);
      expect([host, b.code]).toEqual([host, "WEBHOOK_URL_NOT_ALLOWED"]);
      expect(b.message).toContain("loopback");
      expect(b.message).toContain("--allow-private-webhook-urls");
      await expectStatus(await newEndpoint(lax, { url: `https://${host}:8443/h` }), 201);
    }
  });

  test("documentation and benchmarking addresses are refused; the public controls are saved", async () => {
    for (const host of ["192.0.2.10", "198.51.100.1", "203.0.113.5", "198.18.0.1", "[2001:db8::1]"]) {
      const b = await expectStatus(await newEndpoint(strict, { url: `https://${host}/h` }), 400);
      expect([host, b.code]).toEqual([host, "WEBHOOK_URL_NOT_ALLOWED"]);
    }
    for (const host of ["[2002:808:808::1]", "[64:ff9b::808:808]", "8.8.8.8"]) {
      await expectStatus(await newEndpoint(strict, { url: `https://${host}/h` }), 201);
    }
  });
});

describe("a delivery connects to the address that was checked", () => {
  test("the resolver's answer is where the request goes, with the URL's Host header", async () => {
    const got: Array<{ host: string | null; type: string }> = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        got.push({ host: req.headers.get("host"), type: ((await req.json()) as { type: string }).type });
        return new Response("ok");
      },
    });
    const asked: string[] = [];
    // `receiver.invalid` exists only in this resolver: a second lookup by the HTTP client fails.
    const resolve = async (host: string) => (asked.push(host), host === "receiver.invalid" ? ["127.0.0.1"] : []);
    const ts = await startTestServer({ allowPrivateWebhookUrls: true }, { outbound: { resolve } });
    try {
      const url = `http://receiver.invalid:${receiver.port}/hook`;
      const ep = (await expectStatus(await newEndpoint(ts, { url, allowInsecure: true }), 201)).data.endpoint;
      await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/test`, { method: "POST" }), 202);
      const d = await waitFor("the ping's first attempt", async () => {
        const l = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries`), 200);
        return l.data.deliveries[0]?.attempts >= 1 ? l.data.deliveries[0] : undefined;
      });
      expect(d).toMatchObject({ status: "delivered", lastResponseCode: 200 });
      expect(got).toEqual([{ host: `receiver.invalid:${receiver.port}`, type: "ping" }]);
      // Once when saved, once for the attempt.
      expect(asked).toEqual(["receiver.invalid", "receiver.invalid"]);
    } finally {
      await ts.stop();
      receiver.stop(true);
    }
  }, 30_000);

  test("rebinding: a name checked as public never reaches a loopback receiver", async () => {
    // A receiver on this machine that counts every connection made to it, TLS or not.
    let connections = 0;
    const socket = {
      open(s: { end(): void }) {
        connections++;
        s.end();
      },
      data() {},
    };
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket });
    let listener6: { stop(closeActive?: boolean): void } | undefined;
    try {
      listener6 = Bun.listen({ hostname: "::1", port: listener.port, socket });
    } catch {
      /* no IPv6 loopback here: 127.0.0.1 is what localhost means */
    }
    // The hostile name server: "localhost" is public when asked (93.184.216.34); the system's
    // own answer for the same name, which a second lookup by the HTTP client would get, is
    // 127.0.0.1 (and ::1).
    const asked: string[] = [];
    const resolve = async (host: string) => (asked.push(host), ["93.184.216.34"]);
    // Where 93.184.216.34 silently drops the connection, the attempt ends after 2 s.
    const ts = await startTestServer({}, { outbound: { resolve, timeoutMs: 2_000 } });
    try {
      const ep = (await expectStatus(await newEndpoint(ts, { url: `https://localhost:${listener.port}/hook` }), 201)).data.endpoint;
      await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/test`, { method: "POST" }), 202);
      const d = await waitFor("the ping's first attempt", async () => {
        const l = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries`), 200);
        return l.data.deliveries[0]?.attempts >= 1 ? l.data.deliveries[0] : undefined;
      });
      // 93.184.216.34 on that port answers nothing useful (refused, or no answer in time).
      expect(d.status).toBe("pending");
      expect(d.lastError).toMatch(/could not connect|no answer/);
      expect(connections).toBe(0);
      expect(asked.filter((h) => h === "localhost").length).toBeGreaterThanOrEqual(2);
    } finally {
      await ts.stop();
      listener.stop(true);
      listener6?.stop(true);
    }
  }, 30_000);
});
