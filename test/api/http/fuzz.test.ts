import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { insertContact, insertMessage } from "../../helpers/fixtures";
import { rng } from "../../helpers/rng";
import { rawRequest } from "../../helpers/raw-http";
import { newAccount, operatorKey } from "../../helpers/accounts";
import { classify } from "../../../src/http/access";

/**
 * Seeded fuzz over every registered route: path, query, body and header mutations. Asserts no 5xx,
 * no dropped connection, an error envelope with a `code` on every error answer, and that a refused
 * request (4xx) changes no row in the database (SQLite's total_changes() on the server's connection,
 * the one every write goes through, is the same before and after it). Requests run one at a time
 * so each refusal is judged alone.
 */
const SEED = 14_2026;
const REQUESTS = 2_000;
const RAW_EVERY = 25; // every 25th request goes over a raw socket (CONNECT, TRACE, odd targets)

let s: TestServer;
let key: string;
let standardKey: string;
const ids: Record<string, string[]> = { form: [], contact: [], message: [] };

beforeAll(async () => {
  s = await startTestServer({ authFailuresPerMinute: 1_000_000, webhookLimitPerMinute: 1_000_000 });
  const d = s.running.deps;
  const acct = newAccount(s, { name: "Fuzz", apiLimitPerHour: 1_000_000, apiBurstPerMinute: 1_000_000 });
  key = acct.apiKey;
  standardKey = operatorKey(s, acct.account.id, "standard_access").apiKey;
  // Each key's lastUsedAt is written at most once a minute: write it now, so that a refused
  // request's successful authentication (a 403, a 404) is not counted as a change below.
  await expectStatus(await s.api("/forms", { key: standardKey }), 200);
  for (let i = 0; i < 3; i++) {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", key, json: formBody() }), 201)).data.form;
    ids.form.push(f.id);
  }
  for (let i = 0; i < 5; i++) {
    const c = insertContact(d, acct.account.id);
    ids.contact.push(c);
    ids.message.push(insertMessage(d, acct.account.id, { contactId: c }));
  }
});
afterAll(() => s.stop());

// oracle: no answer shows that a refused request wrote nothing in any table; SQLite counts every row the server's connection wrote
const changes = () => (s.running.deps.sqlite.query("SELECT total_changes() AS n").get() as { n: number }).n;

describe("fuzz: hostile input over every route", () => {
  test(`${REQUESTS} seeded requests: no 5xx, no dropped connection, refused requests change nothing`, async () => {
    const r = rng(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
    const chance = (p: number) => r() < p;
    // A 200 from the backup streams the whole file; one from the live feed never ends (it is a stream).
    // arrange: the routes as declared are what is fuzzed
    const routes = s.running.deps.routes().filter((x) => x.path !== "/v1/admin/backup" && x.path !== "/v1/live/messages");
    const port = Number(new URL(s.url).port);

    const junkSegment = () =>
      pick([
        "%E0%A4%A", "%", "%zz", "%00", "..", "%2e%2e", "a".repeat(300), "txwire_sk_" + "A".repeat(40), "TXWIRE_SK_abc", "null", "-1",
        "99999999999999999999", "%F0%9F%98%80", "<script>", "' OR 1=1 --", crypto.randomUUID(), "bulk", "next", "export", "",
      ]);
    const junkValue = () =>
      pick(["", "0", "-1", "1.5", "abc", "99999999999999999999", "1e309", "true", "null", "%E0%A4%A", "a".repeat(500), "2026-13-45", "[]", "{}", "asc", "desc", "sent", "urgent", "7d", "Mars/Olympus"]);
    const jsonValue = (depth = 0): unknown => {
      const k = Math.floor(r() * (depth > 2 ? 6 : 8));
      if (k === 6) return [jsonValue(depth + 1), jsonValue(depth + 1)];
      if (k === 7) return { a: jsonValue(depth + 1), status: "sent" };
      return [null, true, 1e308, -1, "x".repeat(Math.floor(r() * 50)), 3.14][k];
    };
    const bodyFor = (): { body?: string; type?: string } => {
      const n = Math.floor(r() * 9);
      if (n === 0) return {};
      if (n === 1) return { body: "{not json", type: "application/json" };
      if (n === 2) return { body: "a=1&phoneNumber=%2B12015550100", type: "application/x-www-form-urlencoded" };
      if (n === 3) return { body: JSON.stringify(jsonValue()), type: "application/json" };
      if (n === 4) return { body: "phoneNumber\n+12015550100\n", type: pick(["text/csv", "text/plain", "application/octet-stream"]) };
      if (n === 5) return { body: JSON.stringify({ name: junkValue(), messageTemplate: junkValue(), fields: jsonValue(), settings: jsonValue() }), type: "application/json" };
      if (n === 6) return { body: JSON.stringify({ status: pick(["sent", "failed", "queued", "cancelled", "x"]), sentAt: junkValue(), messageIds: [pick(ids.message), junkValue()], leaseToken: junkValue() }), type: "application/json" };
      if (n === 7) return { body: JSON.stringify({ phoneNumber: pick(["+12015550100", junkValue()]), firstName: junkValue(), tags: jsonValue(), content: junkValue(), limit: jsonValue() }), type: "application/json" };
      return { body: "\u0000\uffff".repeat(10), type: pick(["application/json", "application/json; charset=utf-16", "multipart/form-data"]) };
    };

    let refused = 0;
    let raw = 0;
    const statuses = new Map<number, number>();
    for (let i = 0; i < REQUESTS; i++) {
      const route = pick(routes);
      let method = chance(0.85) ? route.method : pick(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "PROPFIND"]);
      let path = route.path.replace(/:(\w+)/g, (_, p: string) => {
        if (chance(0.25)) return encodeURIComponent(junkSegment()) === "" ? "x" : chance(0.5) ? junkSegment() || "x" : encodeURIComponent(junkSegment());
        return p === "id" ? pick(route.path.includes("forms") ? ids.form : route.path.includes("contacts") ? ids.contact : ids.message) : "x";
      });
      if (chance(0.05)) path += "/" + junkSegment();
      if (chance(0.03)) path = path.replace("/v1/", "//v1/");
      const params: string[] = [];
      const qn = chance(0.6) ? Math.floor(r() * 4) : 0;
      for (let q = 0; q < qn; q++) params.push(`${pick(["page", "limit", "status", "sortBy", "order", "search", "period", "timezone", "wait", "leaseSeconds", "format", "fields", "createdAfter", "tags", "isActive", "formId", "x"])}=${encodeURIComponent(junkValue())}`);
      if (chance(0.03)) params.push("page=%E0%A4%A");
      const target = path + (params.length ? "?" + params.join("&") : "");
      const { body, type } = method === "GET" || method === "HEAD" ? {} : bodyFor();
      const authKind = pick(["bearer", "bearer", "bearer", "standard", "none", "wrong", "upper", "path"] as const);

      const before = changes();
      let status: number;
      let text: string;
      let contentType: string | null;
      if (i % RAW_EVERY === 0) {
        raw++;
        // A space inside a request target is not HTTP (Bun itself answers 505): a client encodes it.
        const rt = target.replace(/ /g, "%20");
        const line = pick([`CONNECT * HTTP/1.1`, `CONNECT 127.0.0.1:${port} HTTP/1.1`, `TRACE ${rt} HTTP/1.1`, `GET ${rt.replace(/\?/g, "%3F")}#frag HTTP/1.1`, `${route.method} ${rt} HTTP/1.1`]);
        const headers = [`Host: ${pick(["127.0.0.1", "x", "", "a.b"])}`, `Authorization: Bearer ${key}`, ...(type ? [`Content-Type: ${type}`] : [])];
        const res = await rawRequest(port, `${line}\r\n${headers.join("\r\n")}`, body ?? "");
        expect(res.status, `dropped connection for ${line}`).toBeGreaterThan(0);
        status = res.status;
        text = res.body;
        contentType = /\r\ncontent-type:\s*([^\r]+)/i.exec(res.headers)?.[1] ?? null;
      } else {
        const headers = new Headers();
        if (type) headers.set("Content-Type", type);
        if (authKind === "bearer") headers.set("Authorization", `Bearer ${key}`);
        if (authKind === "standard") headers.set("Authorization", `Bearer ${standardKey}`);
        if (authKind === "wrong") headers.set("Authorization", pick(["Bearer", "Basic abc", `Bearer ${key.slice(0, -1)}`, "Bearer txwire_sk_", `bearer  ${key} extra`]));
        if (authKind === "upper") headers.set("Authorization", `Bearer ${key.toUpperCase()}`);
        let url = `${s.url}${target}`;
        if (authKind === "path" && target.startsWith("/v1/messages")) url = `${s.url}/v1/messages/${pick([key, encodeURIComponent(key), key.replace("t", "%74")])}${target.slice("/v1/messages".length)}`;
        if (chance(0.05)) headers.set("Idempotency-Key", pick(["", "k".repeat(300), "abc"]));
        if (chance(0.05)) headers.set("X-Forwarded-For", junkValue());
        let res: Response;
        try {
          res = await fetch(url, { method, headers, body });
        } catch (err) {
          throw new Error(`dropped connection for ${method} ${target}: ${err}`);
        }
        status = res.status;
        text = method === "HEAD" ? "" : await res.text();
        contentType = res.headers.get("content-type");
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // SMSGate's GET /logs is 501 by design, as SMSGate's cloud server answers.
      const deliberate = status === 501 && isThirdParty(target) && /^\/3rdparty\/v1\/logs\b/.test(new URL(target, "http://x").pathname);
      if (status >= 500 && !deliberate) throw new Error(`${status} for ${method} ${target}: ${text.slice(0, 300)}`);
      if (status >= 400) {
        refused++;
        expect(changes(), `a refused ${method} ${target} (${status}) changed data`).toBe(before);
        if (text && contentType?.includes("application/json")) {
          const b = JSON.parse(text);
          // SMSGate's third-party API answers errors in SMSGate's body: {message, code: <status>, data};
          // a request target the server cannot read as a path (CONNECT's) names no API, so Textwire's.
          const envelope = b.status === "error" && typeof b.code === "string";
          const coded = isThirdParty(target) ? (b.code === status && typeof b.data === "string") || (envelope && b.details?.field === "url") : envelope;
          if (!coded) throw new Error(`error answer without a code: ${status} ${method} ${target}: ${text.slice(0, 300)}`);
        }
      }
    }
    // The mix really exercised refusals and successes, and the raw-socket path.
    expect(refused).toBeGreaterThan(REQUESTS / 4);
    expect([...statuses.keys()].some((st) => st < 300)).toBe(true);
    expect(raw).toBeGreaterThan(50);
    const health = await fetch(`${s.url}/health`);
    expect(health.status).toBe(200);
  }, 30_000);
});

/** Whether the server reads the target as a path of SMSGate's third-party API (src/http/access.ts). */
function isThirdParty(target: string): boolean {
  try {
    return classify(new URL(target, "http://x").pathname) === "thirdparty";
  } catch {
    return false;
  }
}
