import { describe, expect, test } from "bun:test";
import { Metrics, webhookOutcome } from "../../../src/services/metrics";
import { MessageQueue } from "../../../src/queue/priority-queue";

const routes = [
  { method: "GET", path: "/v1/contacts/:id" },
  { method: "GET", path: "/v1/contacts/export" },
  { method: "GET", path: "/v1/messages/" },
  { method: "GET", path: "/v1/messages/:id" },
  { method: "POST", path: "/v1/forms/:id/webhook" },
];
const state = (logPath: string) => ({ logPath, requestId: "r", startedAt: 0, origin: "", clientIp: "", headers: {} });

describe("Metrics", () => {
  test("labels requests by route pattern; static segments win over parameters; unknown paths are 'unmatched'", () => {
    const m = new Metrics({ dbPath: "/nonexistent", queue: new MessageQueue(), routes: () => routes });
    expect(m.routeOf("GET", "/v1/contacts/export")).toBe("/v1/contacts/export");
    expect(m.routeOf("GET", "/v1/contacts/abc")).toBe("/v1/contacts/:id");
    expect(m.routeOf("GET", "/v1/messages")).toBe("/v1/messages");
    expect(m.routeOf("GET", "/nope/" + "x".repeat(50))).toBe("unmatched");
    // The key in a messages path never becomes a label.
    m.observe(state("/v1/messages/txwire_sk_…abcd/123e4567-e89b-12d3-a456-426614174000"), "GET", 200, 1);
    expect(m.value("textwire_http_requests_total", { method: "GET", route: "/v1/messages/:id", status: "200" })).toBe(1);
  });

  test("webhook outcomes and 429s", () => {
    const m = new Metrics({ dbPath: "/nonexistent", queue: new MessageQueue(), routes: () => routes });
    for (const st of [200, 200, 400, 404, 413, 429, 503]) m.observe(state("/v1/forms/f1/webhook"), "POST", st, 1);
    expect(m.value("textwire_webhook_submissions_total", { result: "accepted", reason: "accepted" })).toBe(2);
    expect(m.value("textwire_webhook_submissions_total", { result: "rejected", reason: "rate_limited" })).toBe(1);
    expect(m.value("textwire_rate_limited_total", { kind: "webhook" })).toBe(1);
    expect(webhookOutcome(400).reason).toBe("validation");
    expect(webhookOutcome(503).reason).toBe("form_disabled");
    expect(webhookOutcome(418).reason).toBe("status_418");
  });

  test("label values are escaped; a missing database file counts as 0 bytes", () => {
    const m = new Metrics({ dbPath: "/nonexistent", queue: new MessageQueue() });
    m.count("x_total", { v: 'a"b\\c\nd' });
    const text = m.render({ uptimeSeconds: 1 });
    expect(text).toContain('x_total{v="a\\"b\\\\c\\nd"} 1');
    expect(text).toContain("textwire_database_bytes 0");
  });
});
