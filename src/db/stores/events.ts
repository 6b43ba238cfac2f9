/**
 * Storage of outbound events: endpoints, the event outbox and the delivery log.
 * Plain functions over prepared statements on the one connection, so a call made inside a
 * caller's transaction is part of it.
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

export interface DeliveryFilter {
  status?: string;
  eventType?: string;
  createdAfter?: string;
  createdBefore?: string;
}

const nullable = (r: RawEndpoint | null): EndpointRow | null => (r ? endpointOf(r) : null);

export function eventStore(sqlite: Database) {
  const q = sqlite.query.bind(sqlite);
  const s = {
    insertEvent: q("INSERT INTO events (id, account_id, type, payload, created_at) VALUES (?1, ?2, ?3, ?4, ?5)"),
    insertDelivery: q(
      `INSERT INTO event_deliveries (event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, 'pending', 0, ?5, ?5, ?5)`,
    ),
    // One statement makes the deliveries of every event after done_seq: each active endpoint of
    // the event's account that subscribes to its type ("*" or the type). Pings carry their own.
    fanOut: q(
      `INSERT OR IGNORE INTO event_deliveries (event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
       SELECT e.id, w.id, e.account_id, e.type, 'pending', 0, e.created_at, e.created_at, e.created_at
         FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.is_active = 1
        WHERE e.seq > ?1 AND e.seq <= ?2 AND e.type <> 'ping'
          AND EXISTS (SELECT 1 FROM json_each(w.events) j WHERE (j.value = '*' AND e.type NOT IN ('message.attempt_failed', 'sms:data-received', 'mms:received')) OR j.value = e.type)
          -- An SMSGate registration's deviceId: only that phone's texts (docs/api-decisions.md, "The SMSGate ecosystem, every call").
          AND (w.device_id IS NULL OR w.device_id = coalesce(json_extract(e.payload, '$.data.message.deviceId'), json_extract(e.payload, '$.data.deviceId'),
                 json_extract(e.payload, '$.data.message.metadata.leases[#-1].deviceId')))`,
    ),
    maxSeq: q("SELECT coalesce(max(seq), 0) AS s FROM events"),
    doneSeq: q("SELECT done_seq AS s FROM event_fanout WHERE id = 1"),
    setDoneSeq: q("UPDATE event_fanout SET done_seq = ?1 WHERE id = 1"),
    eventById: q("SELECT * FROM events WHERE id = ?1 AND account_id = ?2"),
    eventPayload: q("SELECT payload FROM events WHERE id = ?1"),
    activeEndpoints: q("SELECT * FROM webhook_endpoints WHERE is_active = 1"),
    endpointsOf: q("SELECT * FROM webhook_endpoints WHERE account_id = ?1 ORDER BY created_at, id"),
    endpointById: q("SELECT * FROM webhook_endpoints WHERE id = ?1 AND account_id = ?2"),
    endpointAnyAccount: q("SELECT * FROM webhook_endpoints WHERE id = ?1"),
    countEndpoints: q("SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = ?1"),
    endpointByExternalId: q("SELECT * FROM webhook_endpoints WHERE account_id = ?1 AND external_id = ?2"),
    smsgateEndpointsOf: q("SELECT * FROM webhook_endpoints WHERE account_id = ?1 AND format = 'smsgate' ORDER BY created_at, id"),
    dueOf: q(
      `SELECT id, event_id, endpoint_id, attempts FROM event_deliveries INDEXED BY event_deliveries_due_idx
        WHERE endpoint_id = ?1 AND status = 'pending' AND next_attempt_at <= ?2 ORDER BY next_attempt_at LIMIT ?3`,
    ),
    deliveryById: q("SELECT * FROM event_deliveries WHERE id = ?1"),
    deliveriesOfEvent: q("SELECT * FROM event_deliveries WHERE event_id = ?1"),
    // Through the partial index: only pending rows are read, however long the log.
    pendingStats: q("SELECT min(id) AS first, count(*) AS n FROM event_deliveries INDEXED BY event_deliveries_due_idx WHERE status = 'pending'"),
    createdOf: q("SELECT created_at AS t FROM event_deliveries WHERE id = ?1"),
  };
  return {
    insertEvent(e: Omit<EventRow, "seq">) {
      s.insertEvent.run(e.id, e.account_id, e.type, e.payload, e.created_at);
    },
    insertDelivery(eventId: string, endpointId: string, accountId: string, type: string, atIso: string) {
      s.insertDelivery.run(eventId, endpointId, accountId, type, atIso);
    },
    /** Makes the deliveries of events not fanned out yet (call inside a transaction); returns how many. */
    fanOut(): number {
      const done = (s.doneSeq.get() as { s: number }).s;
      const max = (s.maxSeq.get() as { s: number }).s;
      if (max <= done) return 0;
      const n = s.fanOut.run(done, max).changes;
      s.setDoneSeq.run(max);
      return n;
    },
    hasUnfanned: () => (s.maxSeq.get() as { s: number }).s > (s.doneSeq.get() as { s: number }).s,
    findEvent: (accountId: string, id: string) => s.eventById.get(id, accountId) as EventRow | null,
    eventPayload: (id: string) => (s.eventPayload.get(id) as { payload: string } | null)?.payload ?? null,
    listActiveEndpoints: (): EndpointRow[] => (s.activeEndpoints.all() as RawEndpoint[]).map(endpointOf),
    listEndpoints: (accountId: string): EndpointRow[] => (s.endpointsOf.all(accountId) as RawEndpoint[]).map(endpointOf),
    findEndpoint: (accountId: string, id: string): EndpointRow | null => nullable(s.endpointById.get(id, accountId) as RawEndpoint | null),
    findEndpointById: (id: string): EndpointRow | null => nullable(s.endpointAnyAccount.get(id) as RawEndpoint | null),
    countEndpoints: (accountId: string) => (s.countEndpoints.get(accountId) as { n: number }).n,
    /** An SMSGate client's registration by its own id. */
    findEndpointByExternalId: (accountId: string, externalId: string): EndpointRow | null => nullable(s.endpointByExternalId.get(accountId, externalId) as RawEndpoint | null),
    listSmsgateEndpoints: (accountId: string): EndpointRow[] => (s.smsgateEndpointsOf.all(accountId) as RawEndpoint[]).map(endpointOf),
    /** SMSGate's device filter of a registration (kept and shown back). */
    setEndpointDevice: (id: string, deviceId: string | null) => void sqlite.query("UPDATE webhook_endpoints SET device_id = ?2 WHERE id = ?1").run(id, deviceId),
    insertEndpoint(r: EndpointRow) {
      sqlite
        .query(
          `INSERT INTO webhook_endpoints (id, account_id, url, events, description, is_active, allow_insecure, secret, previous_secret,
             previous_secret_expires_at, failing_since, disabled_at, disabled_reason, created_at, updated_at, format, external_id, device_id)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)`,
        )
        .run(r.id, r.account_id, r.url, JSON.stringify(r.events), r.description, r.is_active ? 1 : 0, r.allow_insecure ? 1 : 0, r.secret, r.previous_secret,
          r.previous_secret_expires_at, r.failing_since, r.disabled_at, r.disabled_reason, r.created_at, r.updated_at, r.format, r.external_id, r.device_id);
    },
    updateEndpoint(r: EndpointRow) {
      sqlite
        .query(
          `UPDATE webhook_endpoints SET url = ?2, events = ?3, description = ?4, is_active = ?5, allow_insecure = ?6, secret = ?7,
             previous_secret = ?8, previous_secret_expires_at = ?9, failing_since = ?10, disabled_at = ?11, disabled_reason = ?12,
             updated_at = ?13 WHERE id = ?1`,
        )
        .run(r.id, r.url, JSON.stringify(r.events), r.description, r.is_active ? 1 : 0, r.allow_insecure ? 1 : 0, r.secret, r.previous_secret, r.previous_secret_expires_at,
          r.failing_since, r.disabled_at, r.disabled_reason, r.updated_at);
    },
    deleteEndpoint: (accountId: string, id: string) => sqlite.query("DELETE FROM webhook_endpoints WHERE id = ?1 AND account_id = ?2").run(id, accountId).changes,
    listDue: (endpointId: string, nowIso: string, limit: number) =>
      s.dueOf.all(endpointId, nowIso, limit) as Array<Pick<DeliveryRow, "id" | "event_id" | "endpoint_id" | "attempts">>,
    findDelivery: (id: number) => s.deliveryById.get(id) as DeliveryRow | null,
    listDeliveriesOfEvent: (eventId: string) => s.deliveriesOfEvent.all(eventId) as DeliveryRow[],
    updateDelivery(id: number, d: Partial<DeliveryRow>) {
      const cols = Object.keys(d);
      if (cols.length === 0) return;
      sqlite.query(`UPDATE event_deliveries SET ${cols.map((c, i) => `${c} = ?${i + 2}`).join(", ")} WHERE id = ?1`).run(id, ...(Object.values(d) as any[]));
    },
    /** Pending deliveries of an endpoint end as failed (the endpoint was disabled). */
    failPendingOf(endpointId: string, reason: string, atIso: string) {
      return sqlite
        .query("UPDATE event_deliveries SET status = 'failed', last_error = ?2, next_attempt_at = NULL, updated_at = ?3 WHERE endpoint_id = ?1 AND status = 'pending'")
        .run(endpointId, reason, atIso).changes;
    },
    oldestPending(): { t: string | null; n: number } {
      const p = s.pendingStats.get() as { first: number | null; n: number };
      return { t: p.first === null ? null : ((s.createdOf.get(p.first) as { t: string } | null)?.t ?? null), n: p.n };
    },
    listDeliveries(endpointId: string, f: DeliveryFilter, page: number, limit: number) {
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
        .all(...params, limit, (page - 1) * limit) as DeliveryRow[];
      return { rows, total };
    },
    /**
     * Deletes those of the `limit` oldest events created before `beforeIso` (their deliveries go
     * with them); reads no more than `limit` rows, so a pass with nothing to prune is cheap.
     */
    pruneEvents(beforeIso: string, limit: number): number {
      return sqlite.query("DELETE FROM events WHERE seq IN (SELECT seq FROM events ORDER BY seq LIMIT ?2) AND created_at < ?1").run(beforeIso, limit).changes;
    },
    /** Events after `seq` (for `textwire events tail`). */
    eventsAfter: (after: number, limit: number) =>
      sqlite.query("SELECT seq, id, account_id, type, payload, created_at FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2").all(after, limit) as EventRow[],
    lastEventSeq: () => (s.maxSeq.get() as { s: number }).s,
  };
}

export type EventStore = ReturnType<typeof eventStore>;
