/**
 * Storage of outbound events: endpoints, the event outbox and the delivery log. Plain functions
 * over the connection (docs/architecture.md, "One store style"; bun:sqlite's `query()` compiles
 * each statement once per connection), so a call made inside a caller's transaction is part of it.
 */
import type { Database } from "bun:sqlite";
import type { webhookEndpoints, eventDeliveries, events } from "../schema/events";
import type { RawRow } from "./row";

type RawEndpoint = RawRow<typeof webhookEndpoints>;

/**
 * An endpoint, typed from the drizzle schema (src/db/schema/events.ts): its flags as booleans and
 * its event types parsed (stored as 0/1 and a JSON array; a malformed list reads as none).
 */
export type EndpointRow = Omit<RawEndpoint, "is_active" | "allow_insecure" | "events"> & { is_active: boolean; allow_insecure: boolean; events: string[] };

function endpointOf(r: RawEndpoint): EndpointRow {
  let events: string[] = [];
  try {
    const v = JSON.parse(r.events) as unknown;
    if (Array.isArray(v)) events = v.filter((x): x is string => typeof x === "string");
  } catch {
    /* a malformed stored list: no event types */
  }
  return { ...r, is_active: r.is_active === 1, allow_insecure: r.allow_insecure === 1, events };
}

/** Rows as stored (`SELECT *`), typed from the drizzle schema. */
export type EventRow = RawRow<typeof events>;
export type DeliveryRow = RawRow<typeof eventDeliveries>;

/** A page of an endpoint's delivery log, newest first, narrowed by status, event type and creation time. */
export interface DeliveryFilter {
  status?: string;
  eventType?: string;
  createdAfter?: string;
  createdBefore?: string;
  page: number;
  limit: number;
}

/** An event as `textwire events tail` shows it: its payload as written (the signed body) and its data parsed. */
export type TailEvent = Pick<EventRow, "seq" | "id" | "account_id" | "type" | "payload" | "created_at"> & { data: unknown };

const nullable = (r: RawEndpoint | null): EndpointRow | null => (r ? endpointOf(r) : null);

export function insertEvent(sqlite: Database, e: Omit<EventRow, "seq">): void {
  sqlite.query("INSERT INTO events (id, account_id, type, payload, created_at) VALUES (?1, ?2, ?3, ?4, ?5)").run(e.id, e.account_id, e.type, e.payload, e.created_at);
}

export function insertDelivery(sqlite: Database, d: { eventId: string; endpointId: string; accountId: string; type: string; at: string }): void {
  sqlite
    .query(
      `INSERT INTO event_deliveries (event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, 'pending', 0, ?5, ?5, ?5)`,
    )
    .run(d.eventId, d.endpointId, d.accountId, d.type, d.at);
}

const lastSeq = (sqlite: Database) => (sqlite.query("SELECT coalesce(max(seq), 0) AS s FROM events").get() as { s: number }).s;
const fannedOutSeq = (sqlite: Database) => (sqlite.query("SELECT done_seq AS s FROM event_fanout WHERE id = 1").get() as { s: number }).s;

/**
 * Makes the deliveries of events not fanned out yet (call inside a transaction); returns how many.
 * One statement makes the deliveries of every event after done_seq: each active endpoint of the
 * event's account that subscribes to its type ("*" or the type). Pings carry their own.
 */
export function fanOutEvents(sqlite: Database): number {
  const done = fannedOutSeq(sqlite);
  const max = lastSeq(sqlite);
  if (max <= done) return 0;
  const n = sqlite
    .query(
      `INSERT OR IGNORE INTO event_deliveries (event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       SELECT e.id, w.id, e.account_id, e.type, 'pending', 0, e.created_at, e.created_at, e.created_at
         FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.is_active = 1
        WHERE e.seq > ?1 AND e.seq <= ?2 AND e.type <> 'ping'
          AND EXISTS (SELECT 1 FROM json_each(w.events) j WHERE (j.value = '*' AND e.type NOT IN ('message.attempt_failed', 'sms:data-received', 'mms:received')) OR j.value = e.type)
          -- An SMSGate registration's deviceId: only that phone's texts (docs/api-decisions.md, "The SMSGate ecosystem, every call").
          AND (w.device_id IS NULL OR w.device_id = coalesce(json_extract(e.payload, '$.data.message.deviceId'), json_extract(e.payload, '$.data.deviceId'),
                 json_extract(e.payload, '$.data.message.metadata.leases[#-1].deviceId')))`,
    )
    .run(done, max).changes;
  sqlite.query("UPDATE event_fanout SET done_seq = ?1 WHERE id = 1").run(max);
  return n;
}

/** Events were written that are not fanned out yet. */
export function hasUnfannedEvents(sqlite: Database): boolean {
  return lastSeq(sqlite) > fannedOutSeq(sqlite);
}

export function findEvent(sqlite: Database, accountId: string, id: string): EventRow | null {
  return sqlite.query("SELECT * FROM events WHERE id = ?1 AND account_id = ?2").get(id, accountId) as EventRow | null;
}

/** The event's payload as written: the exact body its receivers get signed (null: pruned). */
export function eventPayload(sqlite: Database, id: string): string | null {
  return (sqlite.query("SELECT payload FROM events WHERE id = ?1").get(id) as { payload: string } | null)?.payload ?? null;
}

export function listActiveEndpoints(sqlite: Database): EndpointRow[] {
  return (sqlite.query("SELECT * FROM webhook_endpoints WHERE is_active = 1").all() as RawEndpoint[]).map(endpointOf);
}

export function listEndpoints(sqlite: Database, accountId: string): EndpointRow[] {
  return (sqlite.query("SELECT * FROM webhook_endpoints WHERE account_id = ?1 ORDER BY created_at, id").all(accountId) as RawEndpoint[]).map(endpointOf);
}

export function findEndpoint(sqlite: Database, accountId: string, id: string): EndpointRow | null {
  return nullable(sqlite.query("SELECT * FROM webhook_endpoints WHERE id = ?1 AND account_id = ?2").get(id, accountId) as RawEndpoint | null);
}

export function findEndpointById(sqlite: Database, id: string): EndpointRow | null {
  return nullable(sqlite.query("SELECT * FROM webhook_endpoints WHERE id = ?1").get(id) as RawEndpoint | null);
}

export function countEndpoints(sqlite: Database, accountId: string): number {
  return (sqlite.query("SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = ?1").get(accountId) as { n: number }).n;
}

/** An SMSGate client's registration by its own id. */
export function findEndpointByExternalId(sqlite: Database, accountId: string, externalId: string): EndpointRow | null {
  return nullable(sqlite.query("SELECT * FROM webhook_endpoints WHERE account_id = ?1 AND external_id = ?2").get(accountId, externalId) as RawEndpoint | null);
}

export function listSmsgateEndpoints(sqlite: Database, accountId: string): EndpointRow[] {
  return (sqlite.query("SELECT * FROM webhook_endpoints WHERE account_id = ?1 AND format = 'smsgate' ORDER BY created_at, id").all(accountId) as RawEndpoint[]).map(endpointOf);
}

/** SMSGate's device filter of a registration (kept and shown back). */
export function setEndpointDevice(sqlite: Database, id: string, deviceId: string | null): void {
  sqlite.query("UPDATE webhook_endpoints SET device_id = ?2 WHERE id = ?1").run(id, deviceId);
}

export function insertEndpoint(sqlite: Database, r: EndpointRow): void {
  sqlite
    .query(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, description, is_active, allow_insecure, secret, previous_secret,
         previous_secret_expires_at, failing_since, disabled_at, disabled_reason, created_at, updated_at, format, external_id, device_id)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)`,
    )
    .run(r.id, r.account_id, r.url, JSON.stringify(r.events), r.description, r.is_active ? 1 : 0, r.allow_insecure ? 1 : 0, r.secret, r.previous_secret,
      r.previous_secret_expires_at, r.failing_since, r.disabled_at, r.disabled_reason, r.created_at, r.updated_at, r.format, r.external_id, r.device_id);
}

export function updateEndpoint(sqlite: Database, r: EndpointRow): void {
  sqlite
    .query(
      `UPDATE webhook_endpoints SET url = ?2, events = ?3, description = ?4, is_active = ?5, allow_insecure = ?6, secret = ?7,
         previous_secret = ?8, previous_secret_expires_at = ?9, failing_since = ?10, disabled_at = ?11, disabled_reason = ?12,
         updated_at = ?13 WHERE id = ?1`,
    )
    .run(r.id, r.url, JSON.stringify(r.events), r.description, r.is_active ? 1 : 0, r.allow_insecure ? 1 : 0, r.secret, r.previous_secret, r.previous_secret_expires_at,
      r.failing_since, r.disabled_at, r.disabled_reason, r.updated_at);
}

export function deleteEndpoint(sqlite: Database, accountId: string, id: string): number {
  return sqlite.query("DELETE FROM webhook_endpoints WHERE id = ?1 AND account_id = ?2").run(id, accountId).changes;
}

/** The endpoint's deliveries due by `nowIso`, most overdue first. */
export function listDueDeliveries(sqlite: Database, endpointId: string, nowIso: string, limit: number): Array<Pick<DeliveryRow, "id" | "event_id" | "endpoint_id" | "attempts">> {
  return sqlite
    .query(
      `SELECT id, event_id, endpoint_id, attempts FROM event_deliveries INDEXED BY event_deliveries_due_idx
        WHERE endpoint_id = ?1 AND status = 'pending' AND next_attempt_at <= ?2 ORDER BY next_attempt_at LIMIT ?3`,
    )
    .all(endpointId, nowIso, limit) as Array<Pick<DeliveryRow, "id" | "event_id" | "endpoint_id" | "attempts">>;
}

export function findDelivery(sqlite: Database, id: number): DeliveryRow | null {
  return sqlite.query("SELECT * FROM event_deliveries WHERE id = ?1").get(id) as DeliveryRow | null;
}

export function listDeliveriesOfEvent(sqlite: Database, eventId: string): DeliveryRow[] {
  return sqlite.query("SELECT * FROM event_deliveries WHERE event_id = ?1").all(eventId) as DeliveryRow[];
}

export function updateDelivery(sqlite: Database, id: number, d: Partial<DeliveryRow>): void {
  const cols = Object.keys(d);
  if (cols.length === 0) return;
  sqlite.query(`UPDATE event_deliveries SET ${cols.map((c, i) => `${c} = ?${i + 2}`).join(", ")} WHERE id = ?1`).run(id, ...(Object.values(d) as any[]));
}

/** Pending deliveries of an endpoint end as failed (the endpoint was disabled). */
export function failPendingDeliveries(sqlite: Database, endpointId: string, reason: string, atIso: string): number {
  return sqlite
    .query("UPDATE event_deliveries SET status = 'failed', last_error = ?2, next_attempt_at = NULL, updated_at = ?3 WHERE endpoint_id = ?1 AND status = 'pending'")
    .run(endpointId, reason, atIso).changes;
}

/** When the oldest pending delivery was made, and how many are pending (through the partial index: only pending rows are read, however long the log). */
export function oldestPendingDelivery(sqlite: Database): { t: string | null; n: number } {
  const p = sqlite.query("SELECT min(id) AS first, count(*) AS n FROM event_deliveries INDEXED BY event_deliveries_due_idx WHERE status = 'pending'").get() as { first: number | null; n: number };
  return { t: p.first === null ? null : ((sqlite.query("SELECT created_at AS t FROM event_deliveries WHERE id = ?1").get(p.first) as { t: string } | null)?.t ?? null), n: p.n };
}

export function listDeliveries(sqlite: Database, endpointId: string, f: DeliveryFilter): { rows: DeliveryRow[]; total: number } {
  const where = ["d.endpoint_id = ?"];
  const params: Array<string | number> = [endpointId];
  if (f.status) where.push("d.status = ?"), params.push(f.status);
  if (f.eventType) where.push("d.event_type = ?"), params.push(f.eventType);
  if (f.createdAfter) where.push("d.created_at >= ?"), params.push(f.createdAfter);
  if (f.createdBefore) where.push("d.created_at < ?"), params.push(f.createdBefore);
  const cond = where.join(" AND ");
  const total = (sqlite.query(`SELECT count(*) AS n FROM event_deliveries d WHERE ${cond}`).get(...params) as { n: number }).n;
  const rows = sqlite
    .query(`SELECT d.* FROM event_deliveries d WHERE ${cond} ORDER BY d.id DESC LIMIT ? OFFSET ?`)
    .all(...params, f.limit, (f.page - 1) * f.limit) as DeliveryRow[];
  return { rows, total };
}

/**
 * Deletes those of the `limit` oldest events created before `beforeIso` (their deliveries go
 * with them); reads no more than `limit` rows, so a pass with nothing to prune is cheap.
 */
export function pruneEvents(sqlite: Database, beforeIso: string, limit: number): number {
  return sqlite.query("DELETE FROM events WHERE seq IN (SELECT seq FROM events ORDER BY seq LIMIT ?2) AND created_at < ?1").run(beforeIso, limit).changes;
}

/** Events after `seq` (for `textwire events tail`), each with its data parsed. */
export function eventsAfter(sqlite: Database, after: number, limit: number): TailEvent[] {
  const rows = sqlite.query("SELECT seq, id, account_id, type, payload, created_at FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2").all(after, limit) as EventRow[];
  return rows.map((e) => ({ ...e, data: (JSON.parse(e.payload) as { data: unknown }).data }));
}

/** The newest event's seq (0: none yet). */
export function lastEventSeq(sqlite: Database): number {
  return lastSeq(sqlite);
}
