/**
 * Whole-account pages of the messages list by created or scheduled time.
 *
 * Every index on `messages` costs each inserted message an entry, so the account's messages are
 * no longer indexed by (account_id, created_at) or (account_id, scheduled_for) alone (migration
 * 0019): (account_id, status, created_at) and (account_id, status, scheduled_for) hold the same
 * order within each status. A page without a status filter is a UNION ALL of the four status
 * ranges under the page's ORDER BY: SQLite merges them as they come off the index (MERGE (UNION
 * ALL), no sort), stops at `offset + limit` — about the entries the single index needed — and
 * only then reads the page's rows by rowid. Same order (time, then rowid), ties included.
 */
import type { Database } from "bun:sqlite";
import { MESSAGE_STATUSES as STATUSES } from "../../../domain/statuses";

export interface StatusMergePage {
  /** Columns of `messages` to return (unqualified names). */
  columns: string;
  /** The sort column: created_at or scheduled_for (both NOT NULL). */
  column: "created_at" | "scheduled_for";
  dir: "ASC" | "DESC";
  /** Conditions on `messages` other than status (joined by AND, `?` placeholders), and their parameters. */
  where: string[];
  params: Array<string | number>;
  limit: number;
  offset: number;
}

export function statusMergePageSql(p: Pick<StatusMergePage, "columns" | "column" | "dir" | "where">): string {
  const arms = STATUSES.map((st) => `SELECT ${p.column} AS k, rowid AS rid FROM messages WHERE status = '${st}' AND ${p.where.join(" AND ")}`);
  return `SELECT ${p.columns} FROM (${arms.join(" UNION ALL ")} ORDER BY 1 ${p.dir}, 2 ${p.dir} LIMIT ? OFFSET ?) p
    JOIN messages ON messages.rowid = p.rid ORDER BY p.k ${p.dir}, p.rid ${p.dir}`;
}

export function listByStatusMerge(sqlite: Database, p: StatusMergePage): Array<Record<string, any>> {
  const params = [...STATUSES.flatMap(() => p.params), p.limit, p.offset];
  return sqlite.query(statusMergePageSql(p)).all(...params) as Array<Record<string, any>>;
}
