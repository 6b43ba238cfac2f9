import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { waitFor } from "../helpers/event-receiver-client";
import type { QueueWatch } from "../../src/services/queue-watch";
import { newApiKey, raiseApiLimits } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

const SHORT_SCHEDULE = [50, 50, 50, 50, 50, 50, 50];

/** An in-process receiver that keeps every request and answers `status()`. */
function captureReceiver(status: () => number = () => 200) {
  const got: Array<{ headers: Record<string, string>; body: string }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      got.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response("x".repeat(3000), { status: status() });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, got, stop: () => server.stop(true) };
}

const newEndpoint = (ts: TestServer, json: Record<string, unknown>) => ts.api("/webhook-endpoints", { method: "POST", json });

describe("webhook endpoints: create, read, change, delete", () => {
  let ts: TestServer;
  beforeAll(async () => (ts = await startTestServer({ allowPrivateWebhookUrls: true })));
  afterAll(() => ts.stop());

  test("create answers the endpoint and its secret once; reads never show the secret", async () => {
    const b = await expectStatus(await newEndpoint(ts, { url: "https://10.0.0.5/hooks/textwire", events: ["message.sent", "message.failed", "message.sent"], description: "CRM" }), 201);
    const ep = b.data.endpoint;
    expect(ep).toMatchObject({ url: "https://10.0.0.5/hooks/textwire", events: ["message.sent", "message.failed"], description: "CRM", isActive: true, allowInsecure: false, disabledAt: null });
    expect(ep.secret).toMatch(/^whsec_/);
    expect(Buffer.from(ep.secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24);
    const got = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}`), 200);
    expect(got.data.endpoint.secret).toBeUndefined();
    expect(got.data.endpoint.id).toBe(ep.id);
    const list = await expectStatus(await ts.api("/webhook-endpoints"), 200);
    expect(list.data.endpoints.map((e: any) => e.id)).toContain(ep.id);
    expect(JSON.stringify(list)).not.toContain("whsec_");
  });

  test("PUT changes the fields given; DELETE removes it", async () => {
    const ep = (await expectStatus(await newEndpoint(ts, { url: "https://10.0.0.6/h", events: ["*"] }), 201)).data.endpoint;
    const put = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}`, { method: "PUT", json: { isActive: false, description: "paused", events: ["contact.created", "*"] } }), 200);
    expect(put.data.endpoint).toMatchObject({ isActive: false, description: "paused", events: ["*"], url: "https://10.0.0.6/h" });
    expect(put.data.endpoint.updatedAt > ep.updatedAt).toBe(true);
    await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}`, { method: "DELETE" }), 200);
    const gone = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}`), 404);
    expect(gone.code).toBe("WEBHOOK_ENDPOINT_NOT_FOUND");
  });

  test("bad input is a 400 naming the field, and nothing is created", async () => {
    const before = (await expectStatus(await ts.api("/webhook-endpoints"), 200)).data.endpoints.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ events: ["*"] }, "url"],
      [{ url: "https://10.0.0.5/", events: [] }, "events"],
      [{ url: "https://10.0.0.5/", events: ["message.exploded"] }, "events"],
      [{ url: "https://10.0.0.5/", events: "*" }, "events"],
      [{ url: "https://10.0.0.5/", events: ["*"], description: "d".repeat(501) }, "description"],
      [{ url: "https://10.0.0.5/", events: ["*"], isActive: "yes" }, "isActive"],
      [{ url: "not a url", events: ["*"] }, "url"],
      [{ url: "ftp://10.0.0.5/", events: ["*"] }, "url"],
    ];
    for (const [json, field] of cases) {
      const b = await expectStatus(await newEndpoint(ts, json), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(b.details.field).toBe(field);
    }
    expect((await expectStatus(await ts.api("/webhook-endpoints"), 200)).data.endpoints.length).toBe(before);
  });

  test("a standard key is refused (403); another account's endpoint is not found (404)", async () => {
    const std = await newApiKey(ts, "standard_access");
    expect((await expectStatus(await ts.api("/webhook-endpoints", { key: std }), 403)).code).toBe("PERMISSION_ERROR");
    expect((await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", key: std, json: { url: "https://10.0.0.5/", events: ["*"] } }), 403)).code).toBe("PERMISSION_ERROR");
    const other = newAccount(ts, { name: "Other" });
    const mine = (await expectStatus(await newEndpoint(ts, { url: "https://10.0.0.7/", events: ["*"] }), 201)).data.endpoint;
    for (const [path, method] of [[`/webhook-endpoints/${mine.id}`, "GET"], [`/webhook-endpoints/${mine.id}`, "DELETE"], [`/webhook-endpoints/${mine.id}/rotate-secret`, "POST"], [`/webhook-endpoints/${mine.id}/deliveries`, "GET"]] as const) {
      const b = await expectStatus(await ts.api(path, { method, key: other.apiKey }), 404);
      expect(b.code).toBe("WEBHOOK_ENDPOINT_NOT_FOUND");
    }
    await expectStatus(await ts.api(`/webhook-endpoints/${mine.id}`), 200);
  });

  test("an account has at most 20 endpoints", async () => {
    const acct = newAccount(ts, { name: "Many" });
    for (let i = 0; i < 20; i++) await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", key: acct.apiKey, json: { url: `https://10.0.1.${i + 1}/`, events: ["*"] } }), 201);
    const b = await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", key: acct.apiKey, json: { url: "https://10.0.2.1/", events: ["*"] } }), 409);
    expect(b.code).toBe("INVALID_STATE");
  });
});

describe("SSRF guard", () => {
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

  const refused = async (ts: TestServer, json: Record<string, unknown>) => {
    const b = await expectStatus(await newEndpoint(ts, { events: ["*"], ...json }), 400);
    expect(b.code).toBe("WEBHOOK_URL_NOT_ALLOWED");
    return b;
  };

  test("loopback and link-local are refused unless --allow-private-webhook-urls", async () => {
    for (const url of ["https://127.0.0.1/h", "https://localhost:8443/h", "https://[::1]/h", "https://169.254.10.1/h", "https://[fe80::1]/h", "https://[::ffff:127.0.0.1]/h"]) {
      const b = await refused(strict, { url });
      expect(b.message).toContain("--allow-private-webhook-urls");
    }
    await expectStatus(await newEndpoint(lax, { url: "https://127.0.0.1/h", events: ["*"] }), 201);
    await expectStatus(await newEndpoint(lax, { url: "https://169.254.10.1/h", events: ["*"] }), 201);
  });

  test("metadata, unspecified and multicast addresses are never allowed", async () => {
    for (const ts of [strict, lax]) {
      for (const url of ["https://169.254.169.254/latest/meta-data", "http://169.254.169.254/", "https://[fd00:ec2::254]/", "https://100.100.100.200/", "https://0.0.0.0/", "https://224.0.0.1/"]) {
        await refused(ts, { url, allowInsecure: true });
      }
    }
  });

  test("private LAN ranges are allowed by default; http only with allowInsecure and only to this machine or the LAN", async () => {
    for (const url of ["https://192.168.1.50/h", "https://10.1.2.3/h", "https://172.16.0.9/h", "https://[fd12::1]/h"]) await expectStatus(await newEndpoint(strict, { url, events: ["*"] }), 201);
    const insecure = await refused(strict, { url: "http://192.168.1.50/h" });
    expect(insecure.message).toContain("allowInsecure");
    await expectStatus(await newEndpoint(strict, { url: "http://192.168.1.50/h", events: ["*"], allowInsecure: true }), 201);
    await refused(strict, { url: "http://8.8.8.8/h", allowInsecure: true });
    await refused(strict, { url: "http://127.0.0.1/h", allowInsecure: true });
    await expectStatus(await newEndpoint(lax, { url: "http://127.0.0.1:9/h", events: ["*"], allowInsecure: true }), 201);
    await refused(strict, { url: "https://user:pw@10.0.0.1/h" });
  });

  test("changing the URL or allowInsecure is judged again", async () => {
    const ep = (await expectStatus(await newEndpoint(strict, { url: "http://192.168.1.51/h", events: ["*"], allowInsecure: true }), 201)).data.endpoint;
    const b = await expectStatus(await strict.api(`/webhook-endpoints/${ep.id}`, { method: "PUT", json: { allowInsecure: false } }), 400);
    expect(b.code).toBe("WEBHOOK_URL_NOT_ALLOWED");
    const b2 = await expectStatus(await strict.api(`/webhook-endpoints/${ep.id}`, { method: "PUT", json: { url: "http://169.254.169.254/" } }), 400);
    expect(b2.code).toBe("WEBHOOK_URL_NOT_ALLOWED");
    expect((await expectStatus(await strict.api(`/webhook-endpoints/${ep.id}`), 200)).data.endpoint).toMatchObject({ url: "http://192.168.1.51/h", allowInsecure: true });
  });
});

describe("signing secret rotation", () => {
  // The server's clock runs with real time, `offset` ms ahead.
  let offset = 0;
  const clock = () => Date.now() + offset;
  let ts: TestServer;
  const rx = captureReceiver();
  beforeAll(async () => {
    ts = await startTestServer({ allowPrivateWebhookUrls: true, eventRetryScheduleMs: SHORT_SCHEDULE }, { clock });
    // The fake clock stands still, so the API limiter would never refill while the test polls.
    raiseApiLimits(ts);
  });
  afterAll(async () => {
    await ts.stop();
    rx.stop();
  });

  test("during the 24 h overlap both secrets' signatures are valid; after it only the new one signs", async () => {
    const ep = (await expectStatus(await newEndpoint(ts, { url: rx.url, events: ["*"], allowInsecure: true }), 201)).data.endpoint;
    const oldSecret = ep.secret;
    const ping = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/test`, { method: "POST" }), 202);
    await waitFor("ping", () => rx.got.length >= 1);
    const first = rx.got[0];
    expect(first.headers["webhook-id"]).toBe(ping.data.eventId);
    expect(first.headers["content-type"]).toBe("application/json");
    expect(first.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(new Webhook(oldSecret).verify(first.body, first.headers)).toMatchObject({ type: "ping", data: { endpoint: { id: ep.id } } });
    expect(Math.abs(Date.parse(JSON.parse(first.body).timestamp) - clock())).toBeLessThan(5_000);

    const rotated = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/rotate-secret`, { method: "POST" }), 200);
    const newSecret = rotated.data.endpoint.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect(Math.abs(Date.parse(rotated.data.endpoint.previousSecretExpiresAt) - (clock() + 24 * 3_600_000))).toBeLessThan(5_000);
    await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/test`, { method: "POST" }), 202);
    await waitFor("second ping", () => rx.got.length >= 2);
    const second = rx.got[1];
    const sigs = second.headers["webhook-signature"].split(" ");
    expect(sigs).toHaveLength(2);
    for (const s of sigs) expect(s).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // A receiver still on the old secret and one already on the new one both accept it.
    expect(new Webhook(oldSecret).verify(second.body, second.headers)).toMatchObject({ type: "ping" });
    expect(new Webhook(newSecret).verify(second.body, second.headers)).toMatchObject({ type: "ping" });

    offset += 24 * 3_600_000 + 1_000;
    await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/test`, { method: "POST" }), 202);
    await waitFor("third ping", () => rx.got.length >= 3);
    const third = rx.got[2];
    expect(third.headers["webhook-signature"].split(" ")).toHaveLength(1);
    // (The timestamp is a day ahead of the real clock, so check the signature itself.)
    const { signature } = await import("../../src/domain/outbound-events");
    const ts3 = Number(third.headers["webhook-timestamp"]);
    expect(third.headers["webhook-signature"]).toBe(signature(newSecret, third.headers["webhook-id"], ts3, third.body));
    expect(third.headers["webhook-signature"]).not.toBe(signature(oldSecret, third.headers["webhook-id"], ts3, third.body));
    expect((await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}`), 200)).data.endpoint.previousSecretExpiresAt).toBeNull();
  });
});

describe("delivery log, redeliver, test ping, disabling, pruning", () => {
  // The server's clock runs with real time, `offset` ms ahead.
  let offset = 0;
  const clock = () => Date.now() + offset;
  let ts: TestServer;
  let failing = true;
  const bad = captureReceiver(() => (failing ? 500 : 200));
  const good = captureReceiver();
  beforeAll(async () => {
    ts = await startTestServer({ allowPrivateWebhookUrls: true, eventRetryScheduleMs: SHORT_SCHEDULE }, { clock });
    // The fake clock stands still, so the API limiter would never refill while the test polls.
    raiseApiLimits(ts);
  });
  afterAll(async () => {
    await ts.stop();
    bad.stop();
    good.stop();
  });

  test("failed attempts are logged with code, first 1 KB of the body and the next attempt; redeliver sends again with the same webhook-id", async () => {
    const ep = (await expectStatus(await newEndpoint(ts, { url: bad.url, events: ["contact.created"], allowInsecure: true }), 201)).data.endpoint;
    const c = await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550100", firstName: "Ann" } }), 201);
    await waitFor("first attempt", () => bad.got.length >= 1);
    const log = await waitFor("attempt logged", async () => {
      const l = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries`), 200);
      return l.data.deliveries[0]?.attempts >= 1 ? l : undefined;
    });
    const d = log.data.deliveries[0];
    expect(d).toMatchObject({ eventType: "contact.created", status: "pending", lastResponseCode: 500, lastError: "HTTP 500" });
    expect(d.lastResponseBody).toHaveLength(1024);
    expect(Date.parse(d.nextAttemptAt)).toBe(Date.parse(d.lastAttemptAt) + 50);
    const body = JSON.parse(bad.got[0].body);
    expect(body).toMatchObject({ type: "contact.created", data: { contact: { id: c.data.contact.id, firstName: "Ann" } } });

    // All eight attempts fail (within seconds, so the endpoint is not disabled): failed.
    const done = await waitFor("failed for good", async () => {
      const l = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries?status=failed`), 200);
      return l.data.deliveries.length === 1 ? l.data.deliveries[0] : undefined;
    }, 30_000);
    expect(done.attempts).toBe(8);
    expect(done.nextAttemptAt).toBeNull();
    expect(bad.got.length).toBe(8);

    failing = false;
    const re = await expectStatus(await ts.api(`/events/${d.eventId}/redeliver`, { method: "POST" }), 202);
    expect(re.data.deliveries).toHaveLength(1);
    expect(re.data.deliveries[0].status).toBe("pending");
    await waitFor("redelivered", () => bad.got.length >= 9);
    expect(bad.got[8].headers["webhook-id"]).toBe(d.eventId);
    const after = await waitFor("delivered", async () => {
      const l = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries?status=delivered&eventType=contact.created`), 200);
      return l.data.deliveries[0];
    });
    expect(after).toMatchObject({ attempts: 1, lastResponseCode: 200, lastError: null });

    // To another endpoint that did not exist when the event happened.
    const other = (await expectStatus(await newEndpoint(ts, { url: good.url, events: ["message.sent"], allowInsecure: true }), 201)).data.endpoint;
    const re2 = await expectStatus(await ts.api(`/events/${d.eventId}/redeliver`, { method: "POST", json: { endpointId: other.id } }), 202);
    expect(re2.data.deliveries).toHaveLength(1);
    await waitFor("sent to the new endpoint", () => good.got.some((g) => g.headers["webhook-id"] === d.eventId));

    expect((await expectStatus(await ts.api(`/events/0193a000-0000-7000-8000-000000000000/redeliver`, { method: "POST" }), 404)).code).toBe("EVENT_NOT_FOUND");
    expect((await expectStatus(await ts.api(`/events/nope/redeliver`, { method: "POST" }), 404)).code).toBe("EVENT_NOT_FOUND");
    expect((await expectStatus(await ts.api(`/events/${d.eventId}/redeliver`, { method: "POST", json: { endpointId: "0193a000-0000-7000-8000-000000000000" } }), 404)).code).toBe("WEBHOOK_ENDPOINT_NOT_FOUND");
    await ts.api(`/webhook-endpoints/${other.id}`, { method: "DELETE" });
    await ts.api(`/webhook-endpoints/${ep.id}`, { method: "DELETE" });
  }, 60_000);

  test("delivery log filters are checked", async () => {
    const ep = (await expectStatus(await newEndpoint(ts, { url: good.url, events: ["*"], allowInsecure: true }), 201)).data.endpoint;
    for (const q of ["status=lost", "eventType=message.exploded", "createdAfter=yesterday", "limit=0", "limit=101", "page=0"]) {
      const b = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries?${q}`), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
    }
    await ts.api(`/webhook-endpoints/${ep.id}`, { method: "DELETE" });
  });

  test("an endpoint failing everything for 3 days is disabled, its pending deliveries fail, and endpoint.disabled is sent to the others", async () => {
    failing = true;
    bad.got.length = 0;
    good.got.length = 0;
    const watcher = (await expectStatus(await newEndpoint(ts, { url: good.url, events: ["endpoint.disabled"], allowInsecure: true }), 201)).data.endpoint;
    const ep = (await expectStatus(await newEndpoint(ts, { url: bad.url, events: ["contact.created"], allowInsecure: true }), 201)).data.endpoint;
    await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550101" } }), 201);
    await waitFor("first failure", () => bad.got.length >= 1);
    await Bun.sleep(100);
    offset += 3 * 86_400_000 + 1_000;
    const disabled = await waitFor("disabled", async () => {
      const e = (await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}`), 200)).data.endpoint;
      return e.isActive === false ? e : undefined;
    });
    expect(Math.abs(Date.parse(disabled.disabledAt) - clock())).toBeLessThan(5_000);
    expect(disabled.disabledReason).toContain("3 days");
    const log = (await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries`), 200)).data.deliveries;
    expect(log.every((d: any) => d.status === "failed")).toBe(true);
    const told = await waitFor("endpoint.disabled delivered", () => good.got.map((g) => JSON.parse(g.body)).find((b) => b.type === "endpoint.disabled"));
    expect(told).toMatchObject({ type: "endpoint.disabled", data: { endpoint: { id: ep.id, disabledReason: disabled.disabledReason } } });
    // A disabled endpoint takes no new events and no test; turning it back on clears the state.
    const n = bad.got.length;
    await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550102" } }), 201);
    expect((await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/test`, { method: "POST" }), 409)).code).toBe("INVALID_STATE");
    await Bun.sleep(200);
    expect(bad.got.length).toBe(n);
    const back = await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}`, { method: "PUT", json: { isActive: true } }), 200);
    expect(back.data.endpoint).toMatchObject({ isActive: true, disabledAt: null, disabledReason: null });
    await ts.api(`/webhook-endpoints/${watcher.id}`, { method: "DELETE" });
    await ts.api(`/webhook-endpoints/${ep.id}`, { method: "DELETE" });
  }, 30_000);

  test("events and their log are pruned after the retention (30 days)", async () => {
    offset += 31 * 86_400_000;
    await ts.running.deps.dispatcher.prune(); // arrange: the daily prune, run at once at the test's clock (what the earlier tests left)
    const ep = (await expectStatus(await newEndpoint(ts, { url: good.url, events: ["*"], allowInsecure: true }), 201)).data.endpoint;
    const ping = (await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/test`, { method: "POST" }), 202)).data;
    await waitFor("ping delivered", async () => (await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries?status=delivered`), 200)).data.deliveries.length === 1);
    const logged = async () => (await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries`), 200)).data.pagination.total;
    offset += 29 * 86_400_000;
    await ts.running.deps.dispatcher.prune(); // arrange: the daily prune at day 29
    expect(await logged()).toBe(1);
    offset += 2 * 86_400_000;
    await ts.running.deps.dispatcher.prune(); // arrange: the daily prune at day 31
    // The event and its log are gone: the log is empty and the event cannot be delivered again.
    expect(await logged()).toBe(0);
    expect((await expectStatus(await ts.api(`/events/${ping.eventId}/redeliver`, { method: "POST" }), 404)).code).toBeTruthy();
  });

  test("queue.stuck: due messages and no phone asking for work for --stuck-after (10 min), once per spell", async () => {
    const rx = captureReceiver();
    try {
      const ep = (await expectStatus(await newEndpoint(ts, { url: rx.url, events: ["queue.stuck"], allowInsecure: true }), 201)).data.endpoint;
      /** The queue.stuck events announced so far, as the endpoint's delivery log lists them (after the fan-out settles). */
      const stuck = async (expected: number) => {
        const total = async () => (await expectStatus(await ts.api(`/webhook-endpoints/${ep.id}/deliveries`), 200)).data.pagination.total as number;
        await waitFor(`${expected} queue.stuck logged`, async () => (await total()) >= expected);
        await Bun.sleep(150);
        return total();
      };
      // arrange: the watch's timer tick, run at once at the given time (the ticks below are the same).
      const watch = ts.running.deps.lifecycle.find((l) => l.name === "queue-watch") as QueueWatch;
      // More than 10 minutes past the server's start and no phone has polled: a due message is stuck.
      offset += 11 * 60_000;
      await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550199", content: "hello" } }), 201);
      watch.check(clock()); // arrange: tick
      expect(await stuck(1)).toBe(1);
      watch.check(clock()); // arrange: tick
      expect(await stuck(1)).toBe(1); // once per spell
      // A phone polls (and leases the message): no longer stuck; a new due message starts the count again.
      await expectStatus(await ts.api("/messages/next", { method: "POST", json: { limit: 1 } }), 200);
      const t0 = clock();
      watch.check(t0); // arrange: tick
      await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550198", content: "hello 2" } }), 201);
      watch.check(t0 + 9 * 60_000); // arrange: tick
      expect(await stuck(1)).toBe(1);
      watch.check(t0 + 10 * 60_000 + 1_000); // arrange: tick
      // (The second spell's event is stamped 10 minutes ahead, by the time check() was given: it waits in the log.)
      expect(await stuck(2)).toBe(2);
      watch.check(t0 + 11 * 60_000); // arrange: tick
      expect(await stuck(2)).toBe(2);
      await waitFor("queue.stuck delivered", () => rx.got.length >= 1);
      expect(JSON.parse(rx.got[0].body)).toMatchObject({ type: "queue.stuck", data: { queue: { stuckAfterSeconds: 600 } } });
    } finally {
      rx.stop();
    }
  });
});
