/**
 * Prometheus text-format metrics, kept in process. Requests are labelled by route PATTERN (from
 * the app's registered routes), never by the concrete path, so ids and keys cannot explode the
 * label set. Other modules may count their own events with `count(name, labels)`.
 */
import { statSync } from "node:fs";
import type { ObservedRequest } from "../lib/request-observer";
import type { MessageQueue } from "../queue/priority-queue";

/** Latency buckets in seconds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = Record<string, string>;

const labelKey = (labels: Labels) =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
    .join(",");

interface RouteMatcher {
  method: string;
  pattern: string;
  re: RegExp;
}

/** What a webhook answer means, by status code. */
export function webhookOutcome(status: number): { result: "accepted" | "rejected"; reason: string } {
  if (status >= 200 && status < 300) return { result: "accepted", reason: "accepted" };
  const reason: Record<number, string> = {
    400: "validation",
    403: "origin_not_allowed",
    404: "unknown_form",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "idempotency_key_reused",
    429: "rate_limited",
    503: "form_disabled",
  };
  return { result: "rejected", reason: reason[status] ?? `status_${status}` };
}

export class Metrics {
  private counters = new Map<string, { help: string; values: Map<string, number> }>();
  private latency = new Map<string, { counts: number[]; sum: number; count: number }>();
  private matchers: RouteMatcher[] = [];
  /** Gauges read when /metrics is rendered. */
  private gauges = new Map<string, { help: string; read: () => number }>();
  private matchedRouteCount = -1;
  /** Gauges computed at render time by other modules (each returns Prometheus text lines). */
  private readonly gaugeSources: Array<() => string[]> = [];

  constructor(
    private readonly opts: { dbPath: string; queue: MessageQueue; routes?: () => Array<{ method: string; path: string }>; schemaVersion?: number },
  ) {
    this.describe("textwire_http_requests_total", "HTTP requests by method, route pattern and status");
    this.describe("textwire_webhook_submissions_total", "Webhook submissions by result and reason");
    this.describe("textwire_rate_limited_total", "Requests refused with 429, by kind (api, webhook)");
    this.describe("textwire_webhook_spam_total", "Webhook submissions caught by a form's honeypot (answered like a success, nothing written)");
  }

  /** Route patterns of the app (`app.routes`), used to label requests. */
  setRoutes(routes: Array<{ method: string; path: string }>) {
    this.matchers = routes
      .filter((r) => r.path !== "*")
      .map((r) => {
        const pattern = r.path.length > 1 ? r.path.replace(/\/+$/, "") : r.path;
        const re = new RegExp(
          "^" +
            pattern
              .split("/")
              .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
              .join("/") +
            "/?$",
        );
        return { method: r.method, pattern, re };
      })
      // Static segments before parameters: /contacts/export beats /contacts/:id.
      .sort((a, b) => (b.pattern.match(/\/[^:/][^/]*/g)?.length ?? 0) - (a.pattern.match(/\/[^:/][^/]*/g)?.length ?? 0));
  }

  private byMethod = new Map<string, RouteMatcher[]>();

  routeOf(method: string, path: string): string {
    const routes = this.opts.routes?.();
    if (routes && routes.length !== this.matchedRouteCount) {
      this.setRoutes(routes);
      this.matchedRouteCount = routes.length;
      this.byMethod.clear();
    }
    let list = this.byMethod.get(method);
    if (!list) {
      list = this.matchers.filter((m) => m.method === method || m.method === "ALL");
      this.byMethod.set(method, list);
    }
    for (const m of list) if (m.re.test(path)) return m.pattern;
    for (const m of this.matchers) if (m.re.test(path)) return m.pattern;
    return "unmatched";
  }

  addGauges(source: () => string[]) {
    this.gaugeSources.push(source);
  }

  describe(name: string, help: string) {
    if (!this.counters.has(name)) this.counters.set(name, { help, values: new Map() });
  }

  /** A gauge whose value is read at each render. */
  gauge(name: string, help: string, read: () => number) {
    this.gauges.set(name, { help, read });
  }

  /** Adds `by` to a counter; names should end in `_total`. */
  count(name: string, labels: Labels = {}, by = 1) {
    this.add(name, labelKey(labels), by);
  }

  private add(name: string, key: string, by = 1) {
    let c = this.counters.get(name);
    if (!c) {
      c = { help: name, values: new Map() };
      this.counters.set(name, c);
    }
    c.values.set(key, (c.values.get(key) ?? 0) + by);
  }

  /**
   * Label keys of the per-request counters, by method, route and status (and by status for the
   * webhook's outcome): sorting and escaping the same three labels on every request cost more
   * than the rest of the observer. As bounded as the counters themselves.
   */
  private readonly requestKeys = new Map<string, string>();
  private readonly outcomeKeys = new Map<number, string>();

  value(name: string, labels: Labels = {}): number {
    return this.counters.get(name)?.values.get(labelKey(labels)) ?? 0;
  }

  /** An Observer for the outer fetch handler. */
  readonly observe = (state: ObservedRequest, method: string, status: number, durationMs: number) => {
    // Messages paths carry the key as a segment; the routes are declared without it.
    const path = state.logPath.replace(/^\/v1\/messages\/txwire_sk_[^/]*/, "/v1/messages");
    const route = state.route ?? this.routeOf(method, path);
    const rk = `${method} ${route} ${status}`;
    let key = this.requestKeys.get(rk);
    if (key === undefined) {
      key = labelKey({ method, route, status: String(status) });
      this.requestKeys.set(rk, key);
    }
    this.add("textwire_http_requests_total", key);
    const l = this.latency.get(route) ?? { counts: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 };
    const s = durationMs / 1000;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (s <= LATENCY_BUCKETS[i]) l.counts[i]++;
    l.sum += s;
    l.count++;
    this.latency.set(route, l);
    const isWebhook = /^\/v1\/forms\/[^/]+\/webhook\/?$/.test(path);
    if (isWebhook && method === "POST") {
      let outcome = this.outcomeKeys.get(status);
      if (outcome === undefined) {
        outcome = labelKey(webhookOutcome(status));
        this.outcomeKeys.set(status, outcome);
      }
      this.add("textwire_webhook_submissions_total", outcome);
    }
    if (status === 429) this.count("textwire_rate_limited_total", { kind: isWebhook ? "webhook" : "api" });
  };

  databaseBytes(): number {
    let total = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        total += statSync(this.opts.dbPath + suffix).size;
      } catch {}
    }
    return total;
  }

  render(extra: { uptimeSeconds: number }): string {
    const out: string[] = [];
    for (const [name, c] of this.counters) {
      out.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
      for (const [k, v] of c.values) out.push(`${name}${k ? `{${k}}` : ""} ${v}`);
    }
    out.push("# HELP textwire_http_request_duration_seconds Request latency by route pattern", "# TYPE textwire_http_request_duration_seconds histogram");
    for (const [route, l] of this.latency) {
      const r = labelKey({ route });
      LATENCY_BUCKETS.forEach((b, i) => out.push(`textwire_http_request_duration_seconds_bucket{${r},le="${b}"} ${l.counts[i]}`));
      out.push(`textwire_http_request_duration_seconds_bucket{${r},le="+Inf"} ${l.count}`);
      out.push(`textwire_http_request_duration_seconds_sum{${r}} ${l.sum}`);
      out.push(`textwire_http_request_duration_seconds_count{${r}} ${l.count}`);
    }
    out.push("# HELP textwire_queue_depth Queued messages by priority (all accounts)", "# TYPE textwire_queue_depth gauge");
    for (const [priority, n] of Object.entries(this.opts.queue.countByPriority())) out.push(`textwire_queue_depth{priority="${priority}"} ${n}`);
    out.push("# HELP textwire_database_bytes Size of the SQLite database including its WAL", "# TYPE textwire_database_bytes gauge");
    out.push(`textwire_database_bytes ${this.databaseBytes()}`);
    out.push("# HELP textwire_uptime_seconds Seconds since the server started", "# TYPE textwire_uptime_seconds gauge");
    out.push(`textwire_uptime_seconds ${extra.uptimeSeconds}`);
    for (const [name, g] of this.gauges) out.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} gauge`, `${name} ${g.read()}`);
    if (this.opts.schemaVersion !== undefined) {
      out.push("# HELP textwire_schema_version Database schema version", "# TYPE textwire_schema_version gauge", `textwire_schema_version ${this.opts.schemaVersion}`);
    }
    for (const g of this.gaugeSources) out.push(...g());
    return out.join("\n") + "\n";
  }
}
