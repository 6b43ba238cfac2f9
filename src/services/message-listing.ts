/**
 * Reading messages: one message (another account's is answered as missing) and the list — its
 * filters, sorts, pages and per-status summary, each answered from the index or counters that
 * fit the filters (docs/api-decisions.md, "Read-side targets: boot, analytics in any zone, tag +
 * status filters").
 */
import type { Database } from "bun:sqlite";
import { rollupIntervals } from "../db/stores/messages/rollups";
import { AppError, validationError } from "../errors";
import { iso } from "../lib/clock";
import { messageStage } from "../domain/message-stage";
import { UUID_RE } from "../lib/ids";
import { PRIORITY_RANK, type Priority } from "../queue/priority-queue";
import { isMessageStatus, MESSAGE_STATUSES, PRIORITIES, type MessageStatus } from "../domain/statuses";
import { enumError, parsePaging, parseQueryDate } from "../domain/query-params";
import { listByStatusMerge } from "../db/stores/messages/list";
import { LIST_COLUMNS, type MessageRow, type MessageStore } from "../db/stores/messages";

export const MESSAGE_SORTS = ["createdAt", "scheduledFor", "sentAt", "priority"] as const;
export type MessageSort = (typeof MESSAGE_SORTS)[number];

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

type FieldErr = { field: string; message: string; requirement?: string; provided?: unknown };

const SORT_COLUMN: Record<MessageSort, string> = {
  createdAt: "created_at",
  scheduledFor: "scheduled_for",
  sentAt: "sent_at",
  priority: "priority_rank",
};

/** The account's message, or null: another account's is answered exactly like one that does not exist. */
export function findMessageRow(store: MessageStore, accountId: string, id: string): MessageRow | null {
  if (!UUID_RE.test(id)) return null;
  return store.find(accountId, id);
}

/** The account's message, or MESSAGE_NOT_FOUND. */
export function getMessageRow(store: MessageStore, accountId: string, id: string): MessageRow {
  const row = findMessageRow(store, accountId, id);
  if (!row) throw new AppError("MESSAGE_NOT_FOUND", { details: { messageId: id } });
  return row;
}

export class MessageListing {
  /** Count/summary answers, valid while the connection has made no change since (total_changes()). */
  private countCache = new Map<string, { version: number; summary: Record<MessageStatus, number> }>();

  constructor(
    private readonly sqlite: Database,
    private readonly store: MessageStore,
  ) {}

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
    // Whole-account pages by created or scheduled time merge the status ranges (src/db/stores/messages/list.ts);
    // a priority filter by created time has its own index.
    const merge = q.status === undefined && q.formId === undefined && q.contactId === undefined && (sortBy === "scheduledFor" || (sortBy === "createdAt" && q.priority === undefined));
    const rows = merge
      ? listByStatusMerge(this.sqlite, { columns: LIST_COLUMNS, column: col as "created_at" | "scheduled_for", dir: dir as "ASC" | "DESC", where: pageWhere, params: pageParams, limit, offset: (page - 1) * limit })
      : this.store.page({ where: pageWhere, params: pageParams, orderBy, limit, offset: (page - 1) * limit });
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
        stage: messageStage(r.status, r.lease_expires_at !== null, r.delivered_at),
      })),
      pagination: { total, page, limit, totalPages: Math.ceil(total / limit) },
      summary,
    };
  }

  private rollupSummary(accountId: string, formKey: string, from: number, to: number): Record<MessageStatus, number> {
    if (!(from < to)) return { queued: 0, sent: 0, failed: 0, cancelled: 0 };
    const [v] = rollupIntervals(this.sqlite, accountId, formKey, [from, to]).map((x) => x.values);
    return { queued: v[0], sent: v[1], failed: v[2], cancelled: v[3] };
  }

  private owns(table: "forms" | "contacts", accountId: string, id: string): boolean {
    return UUID_RE.test(id) && (table === "forms" ? this.store.ownsForm(accountId, id) : this.store.ownsContact(accountId, id));
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
    const version = this.store.totalChanges();
    const key = strategy + "\u0000" + where.join(" AND ") + "\u0000" + params.join("\u0000");
    const hit = this.countCache.get(key);
    if (hit && hit.version === version) return { ...hit.summary };
    // One range count per status on an index that leads with (account_id | form_id | contact_id).
    const summary: Record<MessageStatus, number> = { queued: 0, sent: 0, failed: 0, cancelled: 0 };
    if (strategy === "counters") {
      // Kept by triggers on every insert, delete and status change (migration 0001).
      // params: [accountId] or [accountId, priorityRank]
      const rows = this.store.counters(params[0] as string, params.length > 1 ? (params[1] as number) : -1);
      for (const r of rows) if (isMessageStatus(r.status)) summary[r.status] = r.n;
      return summary;
    }
    if (strategy !== "per-status") {
      // A contact's few messages, or one priority's share: walk that index once, group by status.
      const index = strategy === "contact" ? "messages_contact_created_idx" : "messages_account_priority_idx";
      const rows = this.store.countByStatusOn(index, where, params);
      for (const r of rows) summary[r.status] = r.n;
      if (this.countCache.size > 1_000) this.countCache.clear();
      this.countCache.set(key, { version, summary: { ...summary } });
      return summary;
    }
    const counts = this.store.countEachStatus(where, params);
    for (const st of MESSAGE_STATUSES) summary[st] = counts[st];
    if (this.countCache.size > 1_000) this.countCache.clear();
    this.countCache.set(key, { version, summary: { ...summary } });
    return summary;
  }
}

type SummaryStrategy = "counters" | "per-status" | "contact" | "priority";
/** Instants before and after any message: the open ends of a list's date filter for the rollups. */
const ROLLUP_START = Date.parse("0001-01-01T00:00:00.000Z");
const ROLLUP_END = Date.parse("9999-12-31T00:00:00.000Z");
