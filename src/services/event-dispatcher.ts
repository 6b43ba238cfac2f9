/**
 * Delivers the outbox: in process, after commit, with bounded concurrency.
 *
 * - Woken after every emit (setImmediate, i.e. after the commit) and by a timer every
 *   DISPATCH_POLL_MS for retries falling due; at start it picks up whatever SQLite still holds
 *   pending (a crash or restart loses nothing; delivery is at-least-once, receivers dedupe on
 *   `webhook-id`, the event id).
 * - At most DELIVERY_CONCURRENCY requests in flight, and at most PER_ENDPOINT_CONCURRENCY per
 *   endpoint, so one slow receiver cannot hold every slot. Never on the request path: a webhook
 *   submission only writes its outbox rows.
 * - An attempt: the URL's host is resolved once and every address judged again (SSRF guard);
 *   the body is signed per Standard Webhooks (two signatures during a rotation's overlap) and
 *   POSTed to a judged address itself, with the URL's Host and TLS name (outbound-http.ts: no
 *   second lookup for a rebinding name server to answer differently), with a 10 s limit and
 *   no redirects. 2xx = delivered; anything else is retried on RETRY_SCHEDULE_MS, then `failed`.
 * - Results are written through the group-commit writer (they share the webhook path's fsync).
 *   An endpoint that has failed every attempt for DISABLE_AFTER_MS is disabled, its pending
 *   deliveries fail, and an `endpoint.disabled` event is emitted in that same transaction.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../lib/clock";
import { iso } from "../lib/clock";
import type { Logger } from "../lib/log";
import type { GroupCommitWriter } from "../db/group-commit";
import type { Metrics } from "./metrics";
import type { Lifecycle } from "../lib/lifecycle";
import type { EventOutbox } from "./events";
import {
  eventPayload,
  failPendingDeliveries,
  fanOutEvents,
  findDelivery,
  findEndpointById,
  hasUnfannedEvents,
  listActiveEndpoints,
  listDueDeliveries,
  oldestPendingDelivery,
  pruneEvents,
  updateDelivery,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
} from "../db/stores/events";
import {
  DELIVERY_TIMEOUT_MS,
  DISABLE_AFTER_MS,
  RESPONSE_BODY_KEEP_BYTES,
  RETRY_SCHEDULE_MS,
  retryDelay,
  webhookHeaders,
} from "../domain/outbound-events";
import { judgeEventTarget } from "../domain/event-url";
import { fetchAt, resolveHost, type HostResolver } from "./outbound-http";
import { VERSION } from "../version";
import { smsgateDelivery } from "./thirdparty-webhooks";

export const DELIVERY_CONCURRENCY = 16;
export const PER_ENDPOINT_CONCURRENCY = 4;
export const DISPATCH_POLL_MS = 1_000;
/** Fan-outs and attempt results join the next request batch's commit, or commit alone after this. */
export const RIDE_WAIT_MS = 25;
/** How often old events and their delivery log are pruned, and how many rows one transaction deletes. */
export const PRUNE_EVERY_MS = 3_600_000;
export const PRUNE_BATCH = 1_000;

export interface DispatcherOptions {
  allowPrivate: boolean;
  /** Waits between attempts; RETRY_SCHEDULE_MS in production (tests shorten it). */
  retryScheduleMs?: readonly number[];
  timeoutMs?: number;
  retentionDays: number;
  /** Host → addresses (tests may stub DNS). */
  resolve?: HostResolver;
  /** Extra trusted CA certificates (PEM) for https receivers; tests only. */
  ca?: string;
}

export { resolveHost };

type Outcome = { ok: true; status: number; body: string } | { ok: false; status: number | null; body: string | null; error: string };

export class EventDispatcher implements Lifecycle {
  readonly name = "event-dispatcher";
  private readonly inflight = new Map<number, AbortController>();
  private readonly perEndpoint = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private pruneTimer: ReturnType<typeof setInterval> | undefined;
  private stopped = true;
  private pumping = false;
  private again = false;
  private readonly schedule: readonly number[];
  private readonly resolve: HostResolver;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly writer: GroupCommitWriter,
    private readonly outbox: EventOutbox,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly opts: DispatcherOptions,
  ) {
    this.schedule = opts.retryScheduleMs ?? RETRY_SCHEDULE_MS;
    this.resolve = opts.resolve ?? resolveHost;
    metrics.describe("textwire_event_deliveries_total", "Outbound event delivery attempts by result (delivered, retrying, failed)");
    for (const result of ["delivered", "retrying", "failed"]) metrics.count("textwire_event_deliveries_total", { result }, 0);
    metrics.gauge("textwire_events_pending", "Event deliveries waiting to be delivered", () => oldestPendingDelivery(this.sqlite).n);
    metrics.gauge("textwire_events_oldest_pending_seconds", "Age of the oldest event delivery still pending (0 when none)", () => {
      const t = oldestPendingDelivery(this.sqlite).t;
      return t ? Math.max(0, Math.round((this.clock() - Date.parse(t)) / 1000)) : 0;
    });
  }

  start(): void {
    this.stopped = false;
    this.outbox.reload();
    this.outbox.needsFanout = hasUnfannedEvents(this.sqlite);
    this.outbox.onEmitted = () => this.wake();
    this.timer = setInterval(() => this.wake(), DISPATCH_POLL_MS);
    this.timer.unref?.();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref?.();
    void this.prune();
    this.wake();
  }

  /** Stops picking work and abandons attempts in flight: they stay pending and go again after restart. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    this.outbox.onEmitted = () => {};
    for (const c of this.inflight.values()) c.abort();
  }

  /** Deliveries in flight (tests, bench). */
  get busy(): number {
    return this.inflight.size;
  }

  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        this.pump();
      } while (this.again && !this.stopped);
    } catch (err) {
      this.logger.error("event dispatcher: could not read pending deliveries", { error: String(err) });
    } finally {
      this.pumping = false;
    }
  }

  private fanningOut = false;

  /** Makes the deliveries of new events, in a group-commit job (it shares the webhook path's fsync). */
  private fanOut(): void {
    if (this.fanningOut || !this.outbox.needsFanout) return;
    this.fanningOut = true;
    this.outbox.needsFanout = false;
    this.writer.ride({ run: () => fanOutEvents(this.sqlite) }, RIDE_WAIT_MS).then(
      () => {
        this.fanningOut = false;
        this.wake();
      },
      (err) => {
        this.fanningOut = false;
        this.outbox.needsFanout = true;
        if (!this.stopped) this.logger.error("event dispatcher: fan-out failed; retrying", { error: String(err) });
      },
    );
  }

  /** Starts attempts for due deliveries, endpoint by endpoint, within the concurrency limits. */
  private pump(): void {
    this.fanOut();
    const nowIso = iso(this.clock());
    for (const ep of listActiveEndpoints(this.sqlite)) {
      const free = Math.min(DELIVERY_CONCURRENCY - this.inflight.size, PER_ENDPOINT_CONCURRENCY - (this.perEndpoint.get(ep.id) ?? 0));
      if (free <= 0) continue;
      // Deliveries in flight are still pending: ask for enough rows to skip past them.
      const due = listDueDeliveries(this.sqlite, ep.id, nowIso, free + (this.perEndpoint.get(ep.id) ?? 0));
      let started = 0;
      for (const d of due) {
        if (started >= free) break;
        if (this.inflight.has(d.id)) continue;
        started++;
        this.begin(d, ep);
      }
      if (this.inflight.size >= DELIVERY_CONCURRENCY) return;
    }
  }

  private begin(d: Pick<DeliveryRow, "id" | "event_id" | "attempts">, ep: EndpointRow): void {
    const ctl = new AbortController();
    this.inflight.set(d.id, ctl);
    this.perEndpoint.set(ep.id, (this.perEndpoint.get(ep.id) ?? 0) + 1);
    void this.attempt(d, ep, ctl)
      .catch((err) => this.logger.error("event delivery crashed", { deliveryId: d.id, error: String(err) }))
      .finally(() => {
        this.inflight.delete(d.id);
        const n = (this.perEndpoint.get(ep.id) ?? 1) - 1;
        if (n <= 0) this.perEndpoint.delete(ep.id);
        else this.perEndpoint.set(ep.id, n);
        if (!this.stopped) setImmediate(() => this.wake());
      });
  }

  private async attempt(d: Pick<DeliveryRow, "id" | "event_id" | "attempts">, ep: EndpointRow, ctl: AbortController): Promise<void> {
    // A delivery row can be read in the moment between its commit and the commit's flush to disk
    // (src/db/group-commit.ts): nothing goes out before what it tells of is saved.
    await this.writer.durable();
    if (this.stopped) return;
    const payload = eventPayload(this.sqlite, d.event_id);
    if (payload === null) return; // pruned meanwhile
    const outcome = await this.send(ep, d.event_id, payload, ctl.signal);
    if (this.stopped) return; // shutting down: stays pending, retried after restart
    await this.record(d.id, d.event_id, ep.id, outcome).catch((err) => this.logger.error("event delivery: result not recorded", { deliveryId: d.id, error: String(err) }));
  }

  private async send(ep: EndpointRow, eventId: string, payload: string, signal: AbortSignal): Promise<Outcome> {
    let url: URL;
    try {
      url = new URL(ep.url);
    } catch {
      return { ok: false, status: null, body: null, error: "the endpoint URL is not valid" };
    }
    // One lookup per attempt; the request goes to these very addresses (outbound-http.ts).
    const addresses = await this.resolve(url.hostname);
    const verdict = judgeEventTarget(url, addresses, { allowInsecure: ep.allow_insecure, allowPrivate: this.opts.allowPrivate });
    if (!verdict.ok) return { ok: false, status: null, body: null, error: `refused: ${verdict.reason}` };
    const now = this.clock();
    const secrets = [ep.secret];
    if (ep.previous_secret && ep.previous_secret_expires_at && Date.parse(ep.previous_secret_expires_at) > now) secrets.push(ep.previous_secret);
    // An SMSGate client's registration gets SMSGate's body and X-Signature (thirdparty-webhooks.ts).
    const smsgate = ep.format === "smsgate" ? smsgateDelivery(this.sqlite, ep, eventId, payload, Math.floor(now / 1000)) : null;
    const headers = {
      "Content-Type": "application/json",
      "User-Agent": `Textwire/${VERSION} (+webhooks)`,
      ...(smsgate ? smsgate.headers : webhookHeaders(secrets, eventId, Math.floor(now / 1000), payload)),
    };
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? DELIVERY_TIMEOUT_MS);
    const request = { method: "POST", headers, body: smsgate ? smsgate.body : payload, signal: AbortSignal.any([signal, timeout]), ca: this.opts.ca };
    try {
      // The judged addresses in the resolver's order; the next is tried only when one cannot be
      // reached at all (within the same time limit).
      let res: Response | undefined;
      for (let i = 0; res === undefined; i++) {
        try {
          res = await fetchAt(url, addresses[i], request);
        } catch (err) {
          if (i + 1 >= addresses.length || request.signal.aborted) throw err;
        }
      }
      const body = await readStart(res, RESPONSE_BODY_KEEP_BYTES);
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, body };
      return { ok: false, status: res.status, body, error: res.status >= 300 && res.status < 400 ? "redirects are not followed" : `HTTP ${res.status}` };
    } catch (err) {
      if (timeout.aborted) return { ok: false, status: null, body: null, error: `no answer within ${(this.opts.timeoutMs ?? DELIVERY_TIMEOUT_MS) / 1000} s` };
      return { ok: false, status: null, body: null, error: `could not connect: ${String((err as Error)?.message ?? err).slice(0, 200)}` };
    }
  }

  /** Writes one attempt's result (group commit); may disable the endpoint. */
  private async record(deliveryId: number, eventId: string, endpointId: string, o: Outcome): Promise<void> {
    const result = await this.writer.ride({
      run: () => {
        const now = this.clock();
        const at = iso(now);
        const row = findDelivery(this.sqlite, deliveryId);
        // Delivery ids are row ids, reused once an endpoint's deliveries are deleted: an attempt
        // that ends after its endpoint went must not mark a newer delivery that took its id.
        if (!row || row.status !== "pending" || row.event_id !== eventId || row.endpoint_id !== endpointId) return { result: "gone" as const, disabled: false };
        const attempts = row.attempts + 1;
        const common = { attempts, last_attempt_at: at, last_status_code: o.status, last_response_body: o.body, updated_at: at };
        const ep = findEndpointById(this.sqlite, endpointId);
        if (o.ok) {
          updateDelivery(this.sqlite, deliveryId, { ...common, status: "delivered", last_error: null, next_attempt_at: null, delivered_at: at });
          if (ep && ep.failing_since !== null) updateEndpoint(this.sqlite, { ...ep, failing_since: null });
          return { result: "delivered" as const, disabled: false };
        }
        const wait = retryDelay(attempts, this.schedule);
        if (wait === null) updateDelivery(this.sqlite, deliveryId, { ...common, status: "failed", last_error: o.error, next_attempt_at: null });
        else updateDelivery(this.sqlite, deliveryId, { ...common, last_error: o.error, next_attempt_at: iso(now + wait) });
        let disabled = false;
        if (ep) {
          const since = ep.failing_since ?? at;
          if (ep.is_active && now - Date.parse(since) >= DISABLE_AFTER_MS) {
            disabled = true;
            const reason = `every delivery failed for ${Math.round(DISABLE_AFTER_MS / 86_400_000)} days (last: ${o.error})`;
            updateEndpoint(this.sqlite, { ...ep, failing_since: since, is_active: false, disabled_at: at, disabled_reason: reason, updated_at: at });
            failPendingDeliveries(this.sqlite, endpointId, "endpoint disabled", at);
            // Told to the account's other endpoints (this one is inactive now), in this transaction.
            this.outbox.reload();
            this.outbox.emit(ep.account_id, "endpoint.disabled", { endpoint: { id: ep.id, url: ep.url, description: ep.description, disabledAt: at, disabledReason: reason } }, now);
          } else if (ep.failing_since === null) updateEndpoint(this.sqlite, { ...ep, failing_since: since });
        }
        return { result: wait === null ? ("failed" as const) : ("retrying" as const), disabled };
      },
      undo: (r) => {
        if (r.disabled) this.outbox.reload();
      },
    }, RIDE_WAIT_MS);
    if (result.result !== "gone") this.metrics.count("textwire_event_deliveries_total", { result: result.result });
    if (result.disabled) this.logger.warn("webhook endpoint disabled after failing for 3 days", { endpointId });
    else if (result.result === "failed") this.logger.warn("event delivery failed for good", { deliveryId, endpointId, error: o.ok ? undefined : o.error });
  }

  /** Deletes events (and their delivery log) older than the retention, a batch per transaction. */
  async prune(): Promise<number> {
    const before = iso(this.clock() - this.opts.retentionDays * 86_400_000);
    let total = 0;
    try {
      for (;;) {
        if (this.stopped) break;
        const n = this.sqlite.transaction(() => pruneEvents(this.sqlite, before, PRUNE_BATCH))();
        total += n;
        if (n < PRUNE_BATCH) break;
        await new Promise((r) => setImmediate(r));
      }
    } catch (err) {
      this.logger.error("event log pruning failed", { error: String(err) });
    }
    return total;
  }
}

/** The first `max` bytes of a body as text; the rest is not read. */
async function readStart(res: Response, max: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(Math.min(size, max));
  let off = 0;
  for (const c of chunks) {
    const take = Math.min(c.length, all.length - off);
    all.set(c.subarray(0, take), off);
    off += take;
    if (off >= all.length) break;
  }
  return new TextDecoder().decode(all).replace(/\uFFFD+$/, "");
}
