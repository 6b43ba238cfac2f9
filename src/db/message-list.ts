/**
 * Whole-account pages of the messages list by created or scheduled time (issue 15 item 4).
 *
 * Every index on `messages` costs each inserted message an entry, so the account's messages are
 * no longer indexed by (account_id, created_at) or (account_id, scheduled_for) alone (migration
 * 0019): (account_id, status, created_at) and (account_id, status, scheduled_for) hold the same
 * order within each status. A page without a status filter reads the first `offset + limit`
 * entries of each of the four status ranges from the index alone (time and rowid, no sort),
 * merges them here, keeps the page's `limit`, and only then reads those rows by rowid: at most
 * 4 × (offset + limit) index entries — four times the bound of the single index — in the same
 * order (time, then rowid).
 */
import type { Database } from "bun:sqlite";

const STATUSES = ["queued", "sent", "failed", "cancelled"] as const;

export interface StatusMergePage {
  /** Columns of `messages` to return (unqualified names). */
  columns: string;
  /** The sort column: created_at or scheduled_for (both NOT NULL). */
  column: "created_at" | "scheduled_for";
  dir: "ASC" | "DESC";
  /** Conditions on `messages` other than status (joined by AND), and their parameters. */
  where: string[];
  params: Array<string | number>;
  limit: number;
  offset: number;
}

/** The statement reading one status's first entries in page order (exported for the plan tests). */
export function statusRangeSql(p: Pick<StatusMergePage, "column" | "dir" | "where">, status: (typeof STATUSES)[number]): string {
  return `SELECT ${p.column} AS k, rowid AS rid FROM messages WHERE status = '${status}' AND ${p.where.join(" AND ")}
    ORDER BY ${p.column} ${p.dir}, rowid ${p.dir} LIMIT ?`;
}

export const ROWS_BY_ROWID_SQL = (columns: string) => `SELECT rowid AS rid, ${columns} FROM messages WHERE rowid IN (SELECT value FROM json_each(?1))`;

export function listByStatusMerge(sqlite: Database, p: StatusMergePage): Array<Record<string, any>> {
  const want = p.offset + p.limit;
  const entries: Array<{ k: string; rid: number }> = [];
  for (const st of STATUSES) entries.push(...(sqlite.query(statusRangeSql(p, st)).all(...p.params, want) as Array<{ k: string; rid: number }>));
  const sign = p.dir === "ASC" ? 1 : -1;
  entries.sort((a, b) => sign * (a.k < b.k ? -1 : a.k > b.k ? 1 : a.rid - b.rid));
  const page = entries.slice(p.offset, want).map((e) => e.rid);
  if (page.length === 0) return [];
  const rows = sqlite.query(ROWS_BY_ROWID_SQL(p.columns)).all(JSON.stringify(page)) as Array<Record<string, any>>;
  const byRid = new Map(rows.map((r) => [r.rid as number, r]));
  // A row deleted between the two reads is simply left out of the page.
  return page.flatMap((rid) => {
    const r = byRid.get(rid);
    if (!r) return [];
    delete r.rid;
    return [r];
  });
}
