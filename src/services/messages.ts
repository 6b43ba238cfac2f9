/**
 * Messages: list, get, status changes, delete, bulk, manual messages.
 *
 * SQLite is the truth; `queue` (the in-memory priority index) is changed only after the
 * transaction that changed a message's queued-ness has committed. Leases (device polling) live in
 * `LeaseService`; a status change ends any lease on the message.
 */
import type { Database, Statement } from "bun:sqlite";
import { RollupStore } from "../db/message-rollups";
import { insertQueuedMessage } from "../db/message-suppression";
import { AppError, validationError } from "../errors";
import { iso, type Clock, nextUpdatedAt } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import type { MessageQueue, Priority } from "../queue/priority-queue";
import { PRIORITY_RANK } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import { decideTransition, isMessageStatus, MESSAGE_STATUSES, parseIsoTimestamp, type MessageStatus } from "../domain/message-transitions";
import { normalizePhone } from "../domain/phone";
import { smsInfo } from "../domain/sms-encoding";
import { quotaExceeded, type MonthlyQuota } from "./quota";
import { enumError, parsePaging, parseQueryDate } from "../domain/query-params";
import type { LeaseService } from "./leases";
import { PRIORITIES } from "../domain/form-definition";
import { normalizeDeviceTime } from "../domain/device-time";
import { accountTimeZone } from "../db/stores/devices";
import { emitContact, emitMessageStatus } from "./event-payloads";
import { decideRetry, maxAttemptsError } from "../domain/retry-policy";
import { effectiveMaxAttempts, lastFailedLease, requeueForRetry } from "../db/message-retries";
import { deviceNames, recordOwnerRetry, setMetadataSql } from "../db/message-history";
import { listByStatusMerge } from "../db/message-list";
import { toMessage, type Message, type MessageRow } from "../db/message-rows";
import { messageTimeline, type TimelineEvent } from "../domain/message-timeline";
import type { Changes } from "../lib/changes";

export const MESSAGE_SORTS = ["createdAt", "scheduledFor", "sentAt", "priority"] as const;
export type MessageSort = (typeof MESSAGE_SORTS)[number];
/** Manual message content: the same bound as a form's template. */
export const MANUAL_CONTENT_MAX = 1_600;
/** PUT /messages/bulk: ids per request. */
export const BULK_MAX_IDS = 1_000;

/**
 * A new message written outside a form (a manual message, a keyword reply): queued, never leased,
 * with no form, webhook data or template; `created_at` is also its `updated_at`.
 */
export function newQueuedRow(
  f: Pick<MessageRow, "account_id" | "contact_id" | "content" | "recipient_phone" | "recipient_name" | "priority" | "scheduled_for" | "metadata" | "seq" | "created_at"> &
    Partial<Pick<MessageRow, "max_attempts">>,
): MessageRow {
  return {
    id: newId(),
    form_id: null,
    form_name: null,
    status: "queued",
    priority_rank: PRIORITY_RANK[f.priority],
    webhook_data: null,
    template_used: null,
    sent_at: null,
    failure_reason: null,
    retry_count: 0,
    lease_token: null,
    lease_expires_at: null,
    lease_device_id: null,
    lease_expiries: 0,
    last_lease_token: null,
    max_attempts: null,
    broadcast_id: null,
    updated_at: f.created_at,
    ...f,
  };
}

/** The queue entry of a queued message row. */
export function queueEntryOf(r: Pick<MessageRow, "id" | "account_id" | "priority" | "scheduled_for" | "seq">) {
  return { id: r.id, accountId: r.account_id, priority: r.priority, scheduledFor: Date.parse(r.scheduled_for), seq: r.seq };
}

export interface ListQuery {
  /** Query text, or a number from code: read by parsePaging either way. */
  page?: string | number;
  limit?: string | number;
  status?: string;
  priority?: string;
  createdAfter?: string;
  createdBefore?: string;
  formId?: string;
  contactId?: string;
  sortBy?: string;
  order?: string;
}

export interface StatusBody {
  status?: unknown;
  sentAt?: unknown;
  failureReason?: unknown;
  leaseToken?: unknown;
}

/** What only the server's own callers pass with a status change (never read from a request body). */
export interface StatusOptions {
  /** sent: the phone's raw sentAt, when the server's time was recorded instead. */
  deviceSentAt?: string;
  /** The caller announces the change itself (a phone's report batch: once, as the phone's). */
  quiet?: boolean;
}

export interface StatusResult {
  messageId: string;
  status: MessageStatus;
  sentAt: string | null;
  updatedAt: string;
  /** Set when a transient failure sent the message back to the queue for another attempt. */
  retryScheduledFor?: string;
}

type FieldErr = { field: string; message: string; requirement?: string; provided?: unknown };

const SORT_COLUMN: Record<MessageSort, string> = {
  createdAt: "created_at",
  scheduledFor: "scheduled_for",
  sentAt: "sent_at",
  priority: "priority_rank",
};

export class MessageService {
  private readonly byId: Statement<MessageRow, [string, string]>;
  private readonly totalChanges: Statement<{ n: number }, []>;
  private readonly counters: Statement<{ status: string; n: number }, [string, number]>;
  /** Count/summary answers, valid while the connection has made no change since (total_changes()). */
  private countCache = new Map<string, { version: number; summary: Record<MessageStatus, number> }>();
  private readonly rollups: RollupStore;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly queue: MessageQueue,
    private readonly seq: Sequence,
    private readonly leases: LeaseService,
    private readonly sendRatePerMinute: () => number,
    private readonly changes: Changes,
    private readonly quota?: MonthlyQuota,
  ) {
    this.byId = sqlite.query("SELECT * FROM messages WHERE id = ?1 AND account_id = ?2");
    this.rollups = new RollupStore(sqlite);
    this.totalChanges = sqlite.query("SELECT total_changes() AS n");
    this.counters = sqlite.query(
      "SELECT status, SUM(n) AS n FROM message_counts WHERE account_id = ?1 AND (?2 < 0 OR priority_rank = ?2) GROUP BY status",
    );
  }

  /** Another account's message is answered exactly like one that does not exist. */
  findRow(accountId: string, id: string): MessageRow | null {
    if (!UUID_RE.test(id)) return null;
    return this.byId.get(id, accountId) ?? null;
  }

  getRow(accountId: string, id: string): MessageRow {
    const row = this.findRow(accountId, id);
    if (!row) throw new AppError("MESSAGE_NOT_FOUND", { details: { messageId: id } });
    return row;
  }

  get(accountId: string, id: string): Message {
    return toMessage(this.getRow(accountId, id));
  }

  /** The message and its timeline of states and leases (the dashboard's detail view). */
  getWithTimeline(accountId: string, id: string): { message: Message; timeline: TimelineEvent[] } {
    const row = this.getRow(accountId, id);
    const message = toMessage(row);
    const holders = Array.isArray(message.metadata.leases) ? message.metadata.leases.map((l: any) => l?.deviceId).filter((x: unknown): x is string => typeof x === "string") : [];
    const names = deviceNames(this.sqlite, accountId, holders);
    const timeline = messageTimeline(
      {
        status: row.status,
        createdAt: row.created_at,
        scheduledFor: row.scheduled_for,
        sentAt: row.sent_at,
        updatedAt: row.updated_at,
        failureReason: row.failure_reason,
        leaseDeviceId: row.lease_device_id,
        leaseExpiresAt: row.lease_expires_at,
        metadata: message.metadata,
      },
      (d) => names.get(d) ?? null,
    );
    return { message, timeline };
  }

  // ---------------------------------------------------------------- list

  list(accountId: string, q: ListQuery) {
    const errors: FieldErr[] = [];
    const { page, limit } = parsePaging(q, errors);
    if (q.status !== undefined && !isMessageStatus(q.status)) errors.push(enumError("status", MESSAGE_STATUSES, q.status));
    if (q.priority !== undefined && !(PRIORITIES as readonly string[]).includes(q.priority)) errors.push(enumError("priority", PRIORITIES, q.priority));
    const sortBy = (q.sortBy ?? "createdAt") as MessageSort;
    if (!(MESSAGE_SORTS as readonly string[]).includes(sortBy)) errors.push(enumError("sortBy", MESSAGE_SORTS, q.sortBy));
    const order = q.order ?? "desc";
    if (order !== "asc" && order !== "desc") errors.push(enumError("order", ["asc", "desc"], q.order));
    const after = q.createdAfter === undefined ? undefined : parseQueryDate(q.createdAfter);
    const before = q.createdBefore === undefined ? undefined : parseQueryDate(q.createdBefore);
    const dateReq = "ISO 8601 date or date-time, e.g. 2026-11-01 or 2026-11-01T00:00:00Z";
    if (after === null) errors.push({ field: "createdAfter", message: "createdAfter must be an ISO 8601 date", requirement: dateReq, provided: q.createdAfter });
    if (before === null) errors.push({ field: "createdBefore", message: "createdBefore must be an ISO 8601 date", requirement: dateReq, provided: q.createdBefore });
    if (errors.length) throw validationError(errors);

    // WHERE without the status filter (for the summary), then with it (for the page).
    // A form or contact filter is checked against the account first (form and contact ids belong
    // to one account); the counts then lead with form_id / contact_id alone, so they run on that
    // index without row lookups, and the page adds `+account_id` (a check kept out of index choice).
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (q.formId !== undefined || q.contactId !== undefined) {
      if (q.formId !== undefined && !this.owns("forms", accountId, q.formId)) return this.emptyPage(page, limit);
      if (q.contactId !== undefined && !this.owns("contacts", accountId, q.contactId)) return this.emptyPage(page, limit);
      if (q.formId !== undefined) {
        where.push("form_id = ?");
        params.push(q.formId);
      }
      if (q.contactId !== undefined) {
        where.push("contact_id = ?");
        params.push(q.contactId);
      }
    } else {
      where.push("account_id = ?");
      params.push(accountId);
    }
    if (q.priority !== undefined) {
      where.push("priority_rank = ?");
      params.push(PRIORITY_RANK[q.priority as Priority]);
    }
    if (after !== undefined) {
      where.push("created_at >= ?");
      params.push(iso(after!));
    }
    if (before !== undefined) {
      where.push("created_at < ?");
      params.push(iso(before!));
    }
    const wholeAccount = q.contactId === undefined && q.formId === undefined && after === undefined && before === undefined;
    const strategy: SummaryStrategy = wholeAccount
      ? "counters"
      : q.contactId !== undefined
        ? "contact"
        : q.formId !== undefined
          ? "per-status"
          : q.priority !== undefined
            ? "priority"
            : "per-status";
    // Form and date filters without priority or contact: the rollups answer exactly at any instant
    // (a few small rows), so a list after a write never recounts a range of messages.
    const summary =
      strategy === "per-status" && q.priority === undefined
        ? this.rollupSummary(accountId, q.formId ?? "*", after ?? ROLLUP_START, before ?? ROLLUP_END)
        : this.summary(where, params, strategy);
    const pageWhere = [...where];
    const pageParams = [...params];
    if (q.formId !== undefined || q.contactId !== undefined) {
      // Ownership was checked above; the page still checks each row's account.
      pageWhere.push("+account_id = ?");
      pageParams.push(accountId);
    }
    if (q.status !== undefined) {
      // With a contact filter the contact's few rows are the way in; `+status` keeps SQLite
      // from picking the (status, lease_expires_at) index instead.
      pageWhere.push(q.contactId !== undefined ? "+status = ?" : "status = ?");
      pageParams.push(q.status);
    }
    const total = q.status !== undefined ? summary[q.status as MessageStatus] : summary.queued + summary.sent + summary.failed + summary.cancelled;

    // Ties break on rowid, which every index ends with, so the index alone gives the order.
    // Priority: "desc" lists urgent first (rank ascending) and, within a priority, oldest first
    // (queue order); "asc" reverses both.
    const col = SORT_COLUMN[sortBy];
    let dir = order === "desc" ? "DESC" : "ASC";
    if (sortBy === "priority") dir = order === "desc" ? "ASC" : "DESC";
    const orderBy = sortBy === "priority" ? `priority_rank ${dir}, created_at ${dir}, rowid ${dir}` : `${col} ${dir}, rowid ${dir}`;
    const columns = "id, content, recipient_phone, recipient_name, form_name, status, priority, sent_at, created_at, scheduled_for, form_id, contact_id";
    // Whole-account pages by created or scheduled time merge the status ranges (src/db/message-list.ts);
    // a priority filter by created time has its own index.
    const merge = q.status === undefined && q.formId === undefined && q.contactId === undefined && (sortBy === "scheduledFor" || (sortBy === "createdAt" && q.priority === undefined));
    const rows = merge
      ? listByStatusMerge(this.sqlite, { columns, column: col as "created_at" | "scheduled_for", dir: dir as "ASC" | "DESC", where: pageWhere, params: pageParams, limit, offset: (page - 1) * limit })
      : (this.sqlite.query(`SELECT ${columns} FROM messages WHERE ${pageWhere.join(" AND ")} ORDER BY ${orderBy} LIMIT ? OFFSET ?`).all(...pageParams, limit, (page - 1) * limit) as Array<Record<string, any>>);
    return {
      messages: rows.map((r) => ({
        id: r.id,
        content: r.content,
        recipientPhone: r.recipient_phone,
        recipientName: r.recipient_name,
        formId: r.form_id,
        formName: r.form_name,
        contactId: r.contact_id,
        status: r.status,
        priority: r.priority,
        scheduledFor: r.scheduled_for,
        sentAt: r.sent_at,
        createdAt: r.created_at,
      })),
      pagination: { total, page, limit, totalPages: Math.ceil(total / limit) },
      summary,
    };
  }

  private rollupSummary(accountId: string, formKey: string, from: number, to: number): Record<MessageStatus, number> {
    if (!(from < to)) return { queued: 0, sent: 0, failed: 0, cancelled: 0 };
    const [v] = this.rollups.intervals(accountId, formKey, [from, to]).map((x) => x.values);
    return { queued: v[0], sent: v[1], failed: v[2], cancelled: v[3] };
  }

  private owns(table: "forms" | "contacts", accountId: string, id: string): boolean {
    return UUID_RE.test(id) && this.sqlite.query(`SELECT 1 AS x FROM ${table} WHERE id = ?1 AND account_id = ?2`).get(id, accountId) !== null;
  }

  private emptyPage(page: number, limit: number) {
    return { messages: [], pagination: { total: 0, page, limit, totalPages: 0 }, summary: { queued: 0, sent: 0, failed: 0, cancelled: 0 } };
  }

  /**
   * Messages per status under the filters other than status: one COUNT per status with
   * `status = ?` spelled out, so each is a range count on (account_id|form_id, status,
   * created_at). Cached until the connection's next write (total_changes() moves on any write).
   */
  private summary(where: string[], params: Array<string | number>, strategy: SummaryStrategy): Record<MessageStatus, number> {
    const version = this.totalChanges.get()!.n;
    const key = strategy + "\u0000" + where.join(" AND ") + "\u0000" + params.join("\u0000");
    const hit = this.countCache.get(key);
    if (hit && hit.version === version) return { ...hit.summary };
    // One range count per status on an index that leads with (account_id | form_id | contact_id).
    const summary: Record<MessageStatus, number> = { queued: 0, sent: 0, failed: 0, cancelled: 0 };
    if (strategy === "counters") {
      // Kept by triggers on every insert, delete and status change (migration 0001).
      // params: [accountId] or [accountId, priorityRank]
      const rows = this.counters.all(params[0] as string, params.length > 1 ? (params[1] as number) : -1);
      for (const r of rows) if (isMessageStatus(r.status)) summary[r.status] = r.n;
      return summary;
    }
    const cond = where.join(" AND ");
    if (strategy !== "per-status") {
      // A contact's few messages, or one priority's share: walk that index once, group by status.
      const index = strategy === "contact" ? "messages_contact_created_idx" : "messages_account_priority_idx";
      const rows = this.sqlite
        .query(`SELECT status, COUNT(*) AS n FROM messages INDEXED BY ${index} WHERE ${cond} GROUP BY status`)
        .all(...params) as Array<{ status: MessageStatus; n: number }>;
      for (const r of rows) summary[r.status] = r.n;
      if (this.countCache.size > 1_000) this.countCache.clear();
      this.countCache.set(key, { version, summary: { ...summary } });
      return summary;
    }
    const counts = this.sqlite
      .query(MESSAGE_STATUSES.map((st) => `(SELECT COUNT(*) FROM messages WHERE status = '${st}' AND ${cond}) AS ${st}`).join(", ").replace(/^/, "SELECT "))
      .get(...MESSAGE_STATUSES.flatMap(() => params)) as Record<MessageStatus, number>;
    for (const st of MESSAGE_STATUSES) summary[st] = counts[st];
    if (this.countCache.size > 1_000) this.countCache.clear();
    this.countCache.set(key, { version, summary: { ...summary } });
    return summary;
  }

  // ---------------------------------------------------------------- status

  /**
   * Applies one status request. Validation → 400 VALIDATION_ERROR; an illegal move → 400
   * 'Invalid status transition' (no code); a same-status repeat with the same values → 200,
   * nothing written. A stale `leaseToken` (the message is leased to someone else) → 409.
   */
  updateStatus(accountId: string, id: string, body: StatusBody, opts: StatusOptions = {}): StatusResult {
    const result = this.applyStatus(accountId, id, body, opts);
    this.afterCommit(result.effects);
    if (result.effects.endLease && !opts.quiet) this.changes.message(accountId, "updated", "api");
    return result.answer;
  }

  private applyStatus(accountId: string, id: string, body: StatusBody, opts: StatusOptions = {}): { answer: StatusResult; effects: Effects } {
    if (body.leaseToken !== undefined && body.leaseToken !== null && typeof body.leaseToken !== "string") {
      throw validationError([{ field: "leaseToken", message: "leaseToken must be a string", requirement: "the leaseToken from next", provided: body.leaseToken }]);
    }
    return this.sqlite.transaction(() => {
      const row = this.getRow(accountId, id);
      // Phones' unpadded or zone-less sentAt: read in the account's time zone.
      const sentAt = body.status === "sent" ? normalizeDeviceTime(body.sentAt, accountTimeZone(this.sqlite, accountId)) : body.sentAt;
      // The lease is judged before the move: a report from a phone whose lease is not the latest
      // one issued (held now, or the last one, expired or reported) never records anything.
      const token = typeof body.leaseToken === "string" && body.leaseToken !== "" ? body.leaseToken : undefined;
      const currentLease = row.lease_token ?? row.last_lease_token;
      if (token !== undefined && currentLease !== null && currentLease !== token) {
        throw new AppError("LEASE_CONFLICT", {
          message: "This message is now leased to another device; this report was not recorded",
          details: { messageId: id, currentStatus: row.status, leaseExpiresAt: row.lease_expires_at },
        });
      }
      // A phone repeating the failure report that already sent this message back for a retry.
      if (row.status === "queued" && body.status === "failed" && token !== undefined && row.lease_token === null && lastFailedLease(row.metadata) === token) {
        return { answer: { messageId: id, status: row.status, sentAt: row.sent_at, updatedAt: row.updated_at, retryScheduledFor: row.scheduled_for }, effects: {} };
      }
      const decision = decideTransition(
        { status: row.status, sentAt: row.sent_at, failureReason: row.failure_reason, retryCount: row.retry_count },
        { status: body.status as MessageStatus, sentAt: sentAt as string, failureReason: body.failureReason as string },
      );
      if (decision.kind === "validation") {
        throw validationError([{ field: decision.field, message: decision.message, requirement: decision.requirement, provided: decision.provided }]);
      }
      if (decision.kind === "invalid") {
        throw new AppError("INVALID_TRANSITION", {
          details: { currentStatus: decision.currentStatus, requestedStatus: decision.requestedStatus, message: decision.message },
        });
      }
      if (decision.kind === "noop") {
        return { answer: { messageId: id, status: row.status, sentAt: row.sent_at, updatedAt: row.updated_at }, effects: {} };
      }
      const now = this.clock();
      const updatedAt = nextUpdatedAt(now, row.updated_at);
      const next = decision.next;
      if (next.status === "failed") {
        const retry = decideRetry({ retryCount: row.retry_count, maxAttempts: effectiveMaxAttempts(this.sqlite, id), reason: next.failureReason, now });
        if (retry.retry) {
          const scheduledFor = iso(retry.scheduledFor);
          requeueForRetry(this.sqlite, { id, reason: next.failureReason!, retryCount: retry.retryCount, scheduledFor, updatedAt, failedAt: iso(now), leaseToken: row.lease_token });
          // Queued again for an automatic retry; message.failed is only sent for the final failure.
          emitMessageStatus(this.sqlite, accountId, id, "queued", now);
          const effects: Effects = { endLease: id, dequeue: id, enqueue: { ...row, status: "queued", scheduled_for: scheduledFor } };
          return { answer: { messageId: id, status: "queued" as MessageStatus, sentAt: null, updatedAt, retryScheduledFor: scheduledFor }, effects };
        }
      }
      this.sqlite
        .query(
          `UPDATE messages SET status = ?1, sent_at = ?2, failure_reason = ?3, retry_count = ?4, updated_at = ?5,
             lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL,
             lease_expiries = CASE WHEN ?1 = 'queued' THEN 0 ELSE lease_expiries END
           WHERE id = ?6`,
        )
        .run(next.status, next.sentAt, next.failureReason, next.retryCount, updatedAt, id);
      if (row.status === "failed" && next.status === "queued") recordOwnerRetry(this.sqlite, id, { failedAt: row.updated_at, reason: row.failure_reason, retryAt: iso(now) });
      if (decision.becameSent && row.contact_id) {
        this.sqlite
          .query(
            `UPDATE contacts SET last_contacted_at = ?1, message_count = message_count + 1,
               status = CASE WHEN status = 'new' THEN 'contacted' ELSE status END, updated_at = ?2
             WHERE id = ?3 AND account_id = ?4`,
          )
          .run(next.sentAt, iso(now), row.contact_id, accountId);
        // The contact's status, messageCount and lastContactedAt moved: CRM syncs hear of it
        // (docs/api-decisions.md, "The phone path, round two": every contact change emits).
        emitContact(this.sqlite, accountId, row.contact_id, "contact.updated", now);
      }
      if (next.status === "sent" && opts.deviceSentAt !== undefined) {
        // The phone's own sentAt was not believed (docs/devices.md): kept for the timeline.
        this.sqlite.query(`UPDATE messages SET metadata = ${setMetadataSql("'$.deviceTimes.sentAt'", "?2")} WHERE id = ?1`).run(id, opts.deviceSentAt);
      }
      emitMessageStatus(this.sqlite, accountId, id, next.status, now);
      const effects: Effects = { endLease: id };
      if (next.status === "cancelled" && row.lease_token !== null && row.lease_device_id !== null) {
        effects.cancelledLease = { accountId, holder: row.lease_device_id };
      }
      if (decision.leftQueue) effects.dequeue = id;
      if (decision.enteredQueue) effects.enqueue = { ...row, status: "queued" };
      return { answer: { messageId: id, status: next.status, sentAt: next.sentAt, updatedAt }, effects };
    })();
  }

  private afterCommit(e: Effects) {
    if (e.endLease) this.leases.forget(e.endLease);
    if (e.endLease && e.cancelledLease) this.leases.cancelled(e.cancelledLease.accountId, e.endLease, e.cancelledLease.holder);
    if (e.dequeue) this.queue.remove(e.dequeue);
    if (e.enqueue) {
      this.queue.insert(queueEntryOf(e.enqueue));
      this.leases.notify(e.enqueue.account_id);
    }
  }

  // ---------------------------------------------------------------- delete

  delete(accountId: string, id: string): { deletedId: string } {
    this.sqlite.transaction(() => {
      const row = this.getRow(accountId, id);
      if (row.status !== "queued") {
        throw new AppError("INVALID_STATE", {
          message: `Only queued messages can be deleted; this one is ${row.status}`,
          details: { currentStatus: row.status },
        });
      }
      this.sqlite.query("DELETE FROM messages WHERE id = ?1 AND account_id = ?2").run(id, accountId);
    })();
    // withdraw tells the phone holding it, if any (MessageCancelled).
    this.leases.withdraw([id]);
    this.changes.message(accountId, "settled", "api");
    return { deletedId: id };
  }

  // ---------------------------------------------------------------- bulk

  /** Each id is judged alone; refused ones are listed with the code their single request would get. */
  bulk(accountId: string, body: { messageIds?: unknown; status?: unknown; sentAt?: unknown; failureReason?: unknown }) {
    const ids = body.messageIds;
    const errs: FieldErr[] = [];
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > BULK_MAX_IDS) {
      errs.push({
        field: "messageIds",
        message: `messageIds must be an array of 1 to ${BULK_MAX_IDS} message ids`,
        requirement: `array of 1-${BULK_MAX_IDS} ids`,
        provided: Array.isArray(ids) ? `${ids.length} ids` : (ids ?? null),
      });
    } else if (ids.some((x) => typeof x !== "string")) {
      errs.push({ field: "messageIds", message: "every message id must be a string", requirement: "array of strings", provided: null });
    }
    if (!isMessageStatus(body.status)) errs.push(enumError("status", MESSAGE_STATUSES, body.status ?? null));
    if (errs.length) throw validationError(errs);
    // The fields the status needs are checked once for the whole request (as for a queued message).
    const probe = decideTransition({ status: "queued", sentAt: null, failureReason: null, retryCount: 0 }, {
      status: body.status as MessageStatus,
      sentAt: body.sentAt as string,
      failureReason: body.failureReason as string,
    });
    if (probe.kind === "validation") {
      throw validationError([{ field: probe.field, message: probe.message, requirement: probe.requirement, provided: probe.provided }]);
    }
    const errors: Array<{ id: string; code: string; message: string }> = [];
    const seen = new Set<string>();
    // One transaction for the request (each id's change nested in it as a savepoint), so a bulk
    // of 1000 ids costs one fsync, not 1000; the queue and leases change after it commits.
    const applied = this.sqlite.transaction(() => {
      const out: Effects[] = [];
      for (const id of ids as string[]) {
        if (seen.has(id)) continue; // a repeated id is judged once
        seen.add(id);
        try {
          const r = this.applyStatus(accountId, id, { status: body.status, sentAt: body.sentAt, failureReason: body.failureReason });
          if (r.effects.endLease) out.push(r.effects);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          errors.push({ id, code: err.code, message: err.code === "INVALID_TRANSITION" ? String(err.details?.message ?? err.message) : err.message });
        }
      }
      return out;
    })();
    for (const e of applied) this.afterCommit(e);
    if (applied.length > 0) this.changes.message(accountId, "updated", "api");
    return { updated: applied.length, errors };
  }

  // ---------------------------------------------------------------- manual messages

  /**
   * POST /messages/<KEY>: a message outside any form. `contactId` links the contact; a
   * `phoneNumber` that belongs to a contact of the account links that contact; otherwise the
   * message has no contact (none is created: a manual text is not a submission).
   */
  createManual(
    accountId: string,
    body: Record<string, unknown>,
    ctx: { ipAddress?: string; userAgent?: string | null; monthlyQuota?: number | null },
  ): { message: Message; queuePosition: number; estimatedDelivery: string } {
    const errs: FieldErr[] = [];
    const { phoneNumber, contactId, content, priority, scheduledFor, maxAttempts } = body;
    if (phoneNumber !== undefined && contactId !== undefined) {
      errs.push({ field: "phoneNumber", message: "give either phoneNumber or contactId, not both", requirement: "phoneNumber or contactId", provided: phoneNumber });
    } else if (phoneNumber === undefined && contactId === undefined) {
      errs.push({ field: "phoneNumber", message: "phoneNumber or contactId is required", requirement: "phoneNumber or contactId", provided: null });
    }
    let e164: string | undefined;
    if (phoneNumber !== undefined && contactId === undefined) {
      const p = normalizePhone(phoneNumber, { label: "phoneNumber" });
      if (p.ok) e164 = p.e164;
      else errs.push({ field: "phoneNumber", message: p.message, requirement: p.requirement, provided: phoneNumber });
    }
    if (contactId !== undefined && typeof contactId !== "string") errs.push({ field: "contactId", message: "contactId must be a string", provided: contactId });
    if (typeof content !== "string" || content.trim() === "") {
      errs.push({ field: "content", message: "content is required", requirement: `1-${MANUAL_CONTENT_MAX} characters`, provided: content ?? null });
    } else if (content.length > MANUAL_CONTENT_MAX) {
      errs.push({ field: "content", message: `content must be at most ${MANUAL_CONTENT_MAX} characters`, requirement: `1-${MANUAL_CONTENT_MAX} characters`, provided: `${content.length} characters` });
    }
    if (priority !== undefined && !(PRIORITIES as readonly unknown[]).includes(priority)) errs.push(enumError("priority", PRIORITIES, priority));
    const attemptsErr = maxAttemptsError(maxAttempts);
    if (attemptsErr) errs.push({ field: "maxAttempts", message: attemptsErr, requirement: "whole number from 1 to 10", provided: maxAttempts ?? null });
    const now = this.clock();
    let when = now;
    if (scheduledFor !== undefined && scheduledFor !== null) {
      const t = parseIsoTimestamp(scheduledFor);
      if (t === null) errs.push({ field: "scheduledFor", message: "scheduledFor must be an ISO 8601 timestamp", requirement: "ISO 8601 timestamp", provided: scheduledFor });
      else when = t;
    }
    if (errs.length) throw validationError(errs);

    let contact: { id: string; phone_number: string; first_name: string | null; last_name: string | null; opted_out: number } | null = null;
    if (typeof contactId === "string") {
      contact = UUID_RE.test(contactId)
        ? (this.sqlite.query("SELECT id, phone_number, first_name, last_name, opted_out FROM contacts WHERE id = ?1 AND account_id = ?2").get(contactId, accountId) as any)
        : null;
      if (!contact) throw new AppError("CONTACT_NOT_FOUND", { details: { contactId } });
    } else {
      contact = this.sqlite
        .query("SELECT id, phone_number, first_name, last_name, opted_out FROM contacts WHERE account_id = ?1 AND phone_number = ?2")
        .get(accountId, e164!) as any;
    }
    if (contact?.opted_out === 1) {
      throw new AppError("RECIPIENT_OPTED_OUT", {
        message: `${contact.phone_number} replied STOP (opted out of texts); nothing was queued. They can text START to opt back in.`,
        details: { contactId: contact.id, phoneNumber: contact.phone_number },
      });
    }
    const text = content as string;
    const info = smsInfo(text);
    const prio = (priority ?? "normal") as Priority;
    const name = contact ? [contact.first_name, contact.last_name].filter(Boolean).join(" ") || null : null;
    const createdAt = iso(now);
    const row = newQueuedRow({
      account_id: accountId,
      contact_id: contact?.id ?? null,
      content: text,
      recipient_phone: contact?.phone_number ?? e164!,
      recipient_name: name,
      priority: prio,
      scheduled_for: iso(when),
      metadata: JSON.stringify({
        messageLength: text.length,
        variablesUsed: [],
        source: "manual",
        ipAddress: ctx.ipAddress ?? null,
        userAgent: ctx.userAgent ?? null,
        encoding: info.encoding,
        segments: info.segments,
      }),
      seq: this.seq.next(),
      max_attempts: (maxAttempts as number | undefined) ?? null,
      created_at: createdAt,
    });
    // Manual messages count against the account's monthly message quota like webhook ones.
    const refusal = this.quota?.reserve(accountId, ctx.monthlyQuota ?? null);
    if (refusal) throw quotaExceeded(refusal, this.clock());
    const reserved = (ctx.monthlyQuota ?? null) !== null;
    try {
      this.sqlite.transaction(() => {
        insertQueuedMessage(this.sqlite, row);
        emitMessageStatus(this.sqlite, accountId, row.id, "queued", now);
      })();
    } catch (err) {
      if (reserved) this.quota?.settle(accountId, false);
      throw err;
    }
    if (reserved) this.quota?.settle(accountId, true);
    this.queue.insert(queueEntryOf(row));
    this.leases.notify(accountId);
    const pos = this.queue.position(row.id, now, this.sendRatePerMinute())!;
    return { message: toMessage(row), queuePosition: pos.queuePosition, estimatedDelivery: iso(pos.estimatedDelivery) };
  }


}

type SummaryStrategy = "counters" | "per-status" | "contact" | "priority";
/** Instants before and after any message: the open ends of a list's date filter for the rollups. */
const ROLLUP_START = Date.parse("0001-01-01T00:00:00.000Z");
const ROLLUP_END = Date.parse("9999-12-31T00:00:00.000Z");

interface Effects {
  endLease?: string;
  /** The message was cancelled while leased: tell its holder (SSE MessageCancelled). */
  cancelledLease?: { accountId: string; holder: string };
  dequeue?: string;
  enqueue?: MessageRow;
}
