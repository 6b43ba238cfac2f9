/**
 * Outbound event endpoints — the receivers a user registers for outbound events (the API keeps
 * its public name, /v1/webhook-endpoints) — their delivery log, redelivery and the test ping.
 * Endpoint changes reload the outbox's subscriber list after they commit.
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import {
  countEndpoints,
  deleteEndpoint,
  findEndpoint,
  findEvent,
  insertDelivery,
  insertEndpoint,
  listDeliveries,
  listDeliveriesOfEvent,
  listEndpoints,
  updateDelivery,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
} from "../db/stores/events";
import { ALL_EVENTS, EVENT_TYPES, formatSecret, isEventType, SECRET_BYTES, SECRET_OVERLAP_MS } from "../domain/outbound-events";
import { judgeEventTarget } from "../domain/event-url";
import { enumError, parsePaging, parseQueryDate } from "../domain/query-params";
import type { EventOutbox } from "./events";

export const MAX_ENDPOINTS_PER_ACCOUNT = 20;
export const URL_MAX = 2_000;
export const DESCRIPTION_MAX = 500;
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

export interface WebhookEndpoint {
  id: string;
  /** "smsgate": registered through SMSGate's /3rdparty/v1/webhooks, sent in its body and signature. */
  format: "textwire" | "smsgate";
  url: string;
  events: string[];
  description: string | null;
  isActive: boolean;
  allowInsecure: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  /** Until when the secret before the last rotation still signs (null when none does). */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Delivery {
  id: number;
  eventId: string;
  eventType: string;
  status: DeliveryRow["status"];
  attempts: number;
  lastAttemptAt: string | null;
  lastResponseCode: number | null;
  lastResponseBody: string | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

type FieldErr = { field: string; message: string; requirement?: string; provided?: unknown };

export function toEndpoint(r: EndpointRow, now: number): WebhookEndpoint {
  const overlap = r.previous_secret_expires_at && Date.parse(r.previous_secret_expires_at) > now ? r.previous_secret_expires_at : null;
  return {
    id: r.id,
    format: r.format,
    url: r.url,
    events: r.events,
    description: r.description,
    isActive: r.is_active,
    allowInsecure: r.allow_insecure,
    disabledAt: r.disabled_at,
    disabledReason: r.disabled_reason,
    previousSecretExpiresAt: overlap,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toDelivery(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attempts: r.attempts,
    lastAttemptAt: r.last_attempt_at,
    lastResponseCode: r.last_status_code,
    lastResponseBody: r.last_response_body,
    lastError: r.last_error,
    nextAttemptAt: r.status === "pending" ? r.next_attempt_at : null,
    deliveredAt: r.delivered_at,
    createdAt: r.created_at,
  };
}

export interface EndpointInput {
  url?: unknown;
  events?: unknown;
  description?: unknown;
  isActive?: unknown;
  allowInsecure?: unknown;
}

/**
 * A new endpoint row: active, healthy, no previous secret, a Textwire-format endpoint unless `f`
 * says otherwise (an SMSGate client's webhook, services/thirdparty-webhooks.ts).
 */
export function newEndpointRow(f: Pick<EndpointRow, "account_id" | "url" | "events" | "description" | "allow_insecure" | "secret" | "created_at"> & Partial<EndpointRow>): EndpointRow {
  return {
    id: newId(),
    is_active: true,
    previous_secret: null,
    previous_secret_expires_at: null,
    failing_since: null,
    disabled_at: null,
    disabled_reason: null,
    updated_at: f.created_at,
    format: "textwire",
    external_id: null,
    device_id: null,
    ...f,
  };
}

/** How a receiver's address is judged: private addresses allowed or not, and the DNS lookup. */
export interface UrlJudging {
  allowPrivate: boolean;
  resolve: (host: string) => Promise<string[]>;
}

/**
 * Judges a receiver's address, for an event endpoint and for an SMSGate client's webhook
 * (services/thirdparty-webhooks.ts): a URL, http(s), and a target judgeEventTarget allows.
 * `insecure`: whether http:// is taken — the endpoint's allowInsecure, or "as-given" for SMSGate
 * clients, whose http:// addresses (Home Assistant on the LAN) are taken as they come.
 */
export async function checkReceiverUrl(text: string, judging: UrlJudging, insecure: boolean | "as-given"): Promise<void> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw validationError([{ field: "url", message: "url is not a valid URL", requirement: "https://host/path", provided: text.slice(0, 200) }]);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    const message = insecure === "as-given" ? "url must start with https:// or http://" : "url must start with https://";
    throw validationError([{ field: "url", message, requirement: "https://host/path", provided: text.slice(0, 200) }]);
  }
  const allowInsecure = insecure === "as-given" ? url.protocol === "http:" : insecure;
  const verdict = judgeEventTarget(url, await judging.resolve(url.hostname), { allowInsecure, allowPrivate: judging.allowPrivate });
  if (!verdict.ok) throw new AppError("WEBHOOK_URL_NOT_ALLOWED", { message: `This URL cannot receive events: ${verdict.reason}`, details: { url: text.slice(0, 200), reason: verdict.reason } });
}

export class EventEndpointService {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly outbox: EventOutbox,
    private readonly opts: UrlJudging,
  ) {}

  private newSecret(): string {
    return formatSecret(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
  }

  private row(accountId: string, id: string): EndpointRow {
    const r = UUID_RE.test(id) ? findEndpoint(this.sqlite, accountId, id) : null;
    if (!r) throw new AppError("WEBHOOK_ENDPOINT_NOT_FOUND", { details: { endpointId: id.slice(0, 64) } });
    return r;
  }

  /** Field checks shared by create (all required but description) and update (all optional). */
  private async validate(input: EndpointInput, mode: "create" | "update", current?: EndpointRow) {
    const errs: FieldErr[] = [];
    const out: { url?: string; events?: string[]; description?: string | null; isActive?: boolean; allowInsecure?: boolean } = {};
    if (input.url !== undefined || mode === "create") {
      if (typeof input.url !== "string" || input.url.trim() === "" || input.url.length > URL_MAX) {
        errs.push({ field: "url", message: "url is required: the https:// address of your receiver", requirement: `URL, at most ${URL_MAX} characters`, provided: input.url ?? null });
      } else out.url = input.url.trim();
    }
    if (input.events !== undefined || mode === "create") {
      const ev = input.events;
      if (!Array.isArray(ev) || ev.length === 0 || ev.some((x) => typeof x !== "string")) {
        errs.push({ field: "events", message: `events must be a non-empty list of event types, or ["*"] for all`, requirement: `["*"] or any of ${EVENT_TYPES.join(", ")}`, provided: ev ?? null });
      } else {
        const bad = ev.filter((x) => x !== ALL_EVENTS && !isEventType(x));
        if (bad.length) errs.push({ ...enumError("events", [ALL_EVENTS, ...EVENT_TYPES], bad[0]), message: `unknown event type "${String(bad[0]).slice(0, 60)}"` });
        else out.events = ev.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...new Set(ev as string[])];
      }
    }
    if (input.description !== undefined) {
      if (input.description !== null && (typeof input.description !== "string" || input.description.length > DESCRIPTION_MAX)) {
        errs.push({ field: "description", message: `description must be text of at most ${DESCRIPTION_MAX} characters`, requirement: `at most ${DESCRIPTION_MAX} characters`, provided: typeof input.description === "string" ? `${input.description.length} characters` : input.description });
      } else out.description = input.description === null ? null : (input.description as string).trim() || null;
    }
    for (const k of ["isActive", "allowInsecure"] as const) {
      if (input[k] !== undefined) {
        if (typeof input[k] !== "boolean") errs.push({ field: k, message: `${k} must be true or false`, requirement: "boolean", provided: input[k] });
        else out[k] = input[k] as boolean;
      }
    }
    if (errs.length) throw validationError(errs);
    // The target is judged whenever the URL or allowInsecure changes.
    const url = out.url ?? current?.url;
    const allowInsecure = out.allowInsecure ?? current?.allow_insecure === true;
    if (url !== undefined && (out.url !== undefined || out.allowInsecure !== undefined)) await checkReceiverUrl(url, this.opts, allowInsecure);
    return out;
  }

  list(accountId: string): WebhookEndpoint[] {
    const now = this.clock();
    return listEndpoints(this.sqlite, accountId).map((r) => toEndpoint(r, now));
  }

  get(accountId: string, id: string): WebhookEndpoint {
    return toEndpoint(this.row(accountId, id), this.clock());
  }

  /** Creates an endpoint; the answer carries the secret, shown this once. */
  async create(accountId: string, input: EndpointInput): Promise<WebhookEndpoint & { secret: string }> {
    const v = await this.validate(input, "create");
    const now = this.clock();
    const at = iso(now);
    const row = newEndpointRow({
      account_id: accountId,
      url: v.url!,
      events: v.events!,
      description: v.description ?? null,
      is_active: v.isActive !== false,
      allow_insecure: v.allowInsecure === true,
      secret: this.newSecret(),
      created_at: at,
    });
    this.sqlite.transaction(() => {
      if (countEndpoints(this.sqlite, accountId) >= MAX_ENDPOINTS_PER_ACCOUNT) {
        throw new AppError("INVALID_STATE", { message: `An account can have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first`, details: { limit: MAX_ENDPOINTS_PER_ACCOUNT } });
      }
      insertEndpoint(this.sqlite, row);
    })();
    this.outbox.reload();
    return { ...toEndpoint(row, now), secret: row.secret };
  }

  async update(accountId: string, id: string, input: EndpointInput): Promise<WebhookEndpoint> {
    const current = this.row(accountId, id);
    const v = await this.validate(input, "update", current);
    const now = this.clock();
    const next: EndpointRow = { ...this.row(accountId, id) };
    if (v.url !== undefined) next.url = v.url;
    if (v.events !== undefined) next.events = v.events;
    if (v.description !== undefined) next.description = v.description;
    if (v.allowInsecure !== undefined) next.allow_insecure = v.allowInsecure;
    if (v.isActive !== undefined) {
      next.is_active = v.isActive;
      // Turning a disabled endpoint back on starts its health count afresh.
      if (v.isActive) Object.assign(next, { disabled_at: null, disabled_reason: null, failing_since: null });
    }
    next.updated_at = nextUpdatedAt(now, current.updated_at);
    this.sqlite.transaction(() => updateEndpoint(this.sqlite, next))();
    this.outbox.reload();
    if (next.is_active) this.outbox.wake();
    return toEndpoint(next, now);
  }

  delete(accountId: string, id: string): { deletedId: string } {
    this.row(accountId, id);
    this.sqlite.transaction(() => deleteEndpoint(this.sqlite, accountId, id))();
    this.outbox.reload();
    return { deletedId: id };
  }

  /** A new secret; the old one keeps signing beside it for SECRET_OVERLAP_MS. */
  rotateSecret(accountId: string, id: string): WebhookEndpoint & { secret: string } {
    const current = this.row(accountId, id);
    const now = this.clock();
    const next: EndpointRow = {
      ...current,
      secret: this.newSecret(),
      previous_secret: current.secret,
      previous_secret_expires_at: iso(now + SECRET_OVERLAP_MS),
      updated_at: nextUpdatedAt(now, current.updated_at),
    };
    this.sqlite.transaction(() => updateEndpoint(this.sqlite, next))();
    return { ...toEndpoint(next, now), secret: next.secret };
  }

  deliveries(accountId: string, id: string, q: { page?: string | number; limit?: string | number; status?: string; eventType?: string; createdAfter?: string; createdBefore?: string }) {
    this.row(accountId, id);
    const errs: FieldErr[] = [];
    const { page, limit } = parsePaging(q, errs);
    if (q.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(q.status)) errs.push(enumError("status", DELIVERY_STATUSES, q.status.slice(0, 100)));
    if (q.eventType !== undefined && q.eventType !== "ping" && !isEventType(q.eventType)) errs.push(enumError("eventType", [...EVENT_TYPES, "ping"], q.eventType.slice(0, 100)));
    const after = q.createdAfter === undefined ? undefined : parseQueryDate(q.createdAfter);
    const before = q.createdBefore === undefined ? undefined : parseQueryDate(q.createdBefore);
    if (after === null) errs.push({ field: "createdAfter", message: "createdAfter must be an ISO 8601 date", requirement: "ISO 8601 date or date-time", provided: q.createdAfter });
    if (before === null) errs.push({ field: "createdBefore", message: "createdBefore must be an ISO 8601 date", requirement: "ISO 8601 date or date-time", provided: q.createdBefore });
    if (errs.length) throw validationError(errs);
    const { rows, total } = listDeliveries(this.sqlite, id, {
      status: q.status,
      eventType: q.eventType,
      createdAfter: after === undefined ? undefined : iso(after!),
      createdBefore: before === undefined ? undefined : iso(before!),
      page,
      limit,
    });
    return { deliveries: rows.map(toDelivery), pagination: { total, page, limit, totalPages: Math.ceil(total / limit) } };
  }

  /**
   * Sends an event again: to `endpointId` alone when given (even one that did not exist when the
   * event happened), else to every endpoint it went to. Each delivery is pending again, now, with
   * a fresh retry schedule; the webhook-id stays the event id, so receivers still dedupe.
   */
  redeliver(accountId: string, eventId: string, body: { endpointId?: string } | undefined): { eventId: string; deliveries: Delivery[] } {
    const event = UUID_RE.test(eventId) ? findEvent(this.sqlite, accountId, eventId) : null;
    if (!event) throw new AppError("EVENT_NOT_FOUND", { details: { eventId: eventId.slice(0, 64) } });
    const only = body?.endpointId;
    if (only !== undefined) this.row(accountId, only);
    const at = iso(this.clock());
    const rows = this.sqlite.transaction(() => {
      const existing = listDeliveriesOfEvent(this.sqlite, event.id);
      const targets = only !== undefined ? [only] : existing.map((d) => d.endpoint_id);
      for (const endpointId of targets) {
        const d = existing.find((x) => x.endpoint_id === endpointId);
        if (d) updateDelivery(this.sqlite, d.id, { status: "pending", attempts: 0, next_attempt_at: at, delivered_at: null, updated_at: at });
        else insertDelivery(this.sqlite, { eventId: event.id, endpointId, accountId, type: event.type, at });
      }
      return listDeliveriesOfEvent(this.sqlite, event.id).filter((d) => targets.includes(d.endpoint_id));
    })();
    this.outbox.wake();
    return { eventId: event.id, deliveries: rows.map(toDelivery) };
  }

  /** Queues a `ping` event to this endpoint alone (whatever it subscribes to, active or not). */
  test(accountId: string, id: string): { eventId: string; deliveryId: number } {
    const ep = this.row(accountId, id);
    if (!ep.is_active) {
      throw new AppError("INVALID_STATE", { message: "This endpoint is not active; set isActive to true before sending a test event", details: { endpointId: id, disabledReason: ep.disabled_reason } });
    }
    const now = this.clock();
    const eventId = this.sqlite.transaction(() =>
      this.outbox.emit(accountId, "ping", { endpoint: { id: ep.id, url: ep.url }, message: "Test event from Textwire" }, now, ep.id),
    )()!;
    const d = listDeliveriesOfEvent(this.sqlite, eventId)[0];
    return { eventId, deliveryId: d.id };
  }
}
