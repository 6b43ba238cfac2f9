import type { Database, Statement } from "bun:sqlite";
import { LEVEL_DAY, prefixOf, type Prefix } from "../domain/rollup-buckets";
import { rollupDeltas, type MessageFacts, type RollupValues } from "./derived-counts";

/**
 * Reads of message_rollups (migration 0015) and sums over arbitrary time intervals: each interval
 * [b_i, b_{i+1}) is whole UTC days + prefix(b_{i+1}) − prefix(b_i) (src/domain/rollup-buckets.ts),
 * so a year of daily figures in any zone reads ~365 day rows and a few hour/quarter rows per
 * boundary, never the messages themselves (except a residue before an instant off the quarter
 * hour, which no current zone has).
 */

/** Sums of one interval: [queued, sent, failed, cancelled, sent_ms, sent_timed] and failed per reason. */
export interface IntervalSums {
  values: RollupValues;
  reasons: Map<string, number>;
}

interface Row {
  bucket: string;
  reason: string;
  queued: number;
  sent: number;
  failed: number;
  cancelled: number;
  sent_ms: number;
  sent_timed: number;
}

const COLS = "bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed";

function empty(): IntervalSums {
  return { values: [0, 0, 0, 0, 0, 0], reasons: new Map() };
}

function addRow(into: IntervalSums, r: Row, sign: number): void {
  if (r.reason === "") {
    const v = into.values;
    v[0] += sign * r.queued;
    v[1] += sign * r.sent;
    v[2] += sign * r.failed;
    v[3] += sign * r.cancelled;
    v[4] += sign * r.sent_ms;
    v[5] += sign * r.sent_timed;
  } else {
    const reason = r.reason.slice(1);
    into.reasons.set(reason, (into.reasons.get(reason) ?? 0) + sign * r.failed);
  }
}

function addSums(into: IntervalSums, s: IntervalSums, sign: number): void {
  for (let i = 0; i < 6; i++) into.values[i] += sign * s.values[i];
  for (const [k, n] of s.reasons) into.reasons.set(k, (into.reasons.get(k) ?? 0) + sign * n);
}

export class RollupStore {
  private readonly dayRange: Statement<Row, [string, string, string, string]>;
  private readonly byKeys: Statement<Row, [string, string, number, string]>;
  private readonly formTotal: Statement<{ n: number | null }, [string, string]>;
  private readonly residueAll: Statement<MessageRow, [string, string, string]>;
  private readonly residueForm: Statement<MessageRow, [string, string, string, string]>;

  constructor(sqlite: Database) {
    this.dayRange = sqlite.prepare(
      `SELECT ${COLS} FROM message_rollups WHERE account_id = ?1 AND form_id = ?2 AND level = 0 AND bucket >= ?3 AND bucket <= ?4
        ORDER BY bucket, reason`,
    );
    this.byKeys = sqlite.prepare(
      `SELECT ${COLS} FROM message_rollups
        WHERE account_id = ?1 AND form_id = ?2 AND level = ?3 AND bucket IN (SELECT value FROM json_each(?4))`,
    );
    this.formTotal = sqlite.prepare(
      `SELECT SUM(queued + sent + failed + cancelled) AS n FROM message_rollups WHERE account_id = ?1 AND form_id = ?2 AND level = 0 AND reason = ''`,
    );
    const residueCols = "account_id, form_id, status, priority_rank, created_at, sent_at, failure_reason";
    this.residueAll = sqlite.prepare(`SELECT ${residueCols} FROM messages WHERE account_id = ?1 AND created_at >= ?2 AND created_at < ?3`);
    this.residueForm = sqlite.prepare(
      `SELECT ${residueCols} FROM messages WHERE account_id = ?1 AND coalesce(form_id, '') = ?4 AND created_at >= ?2 AND created_at < ?3`,
    );
  }

  /** All-time number of messages of a form (or of an account with formKey "*"). */
  total(accountId: string, formKey: string): number {
    return this.formTotal.get(accountId, formKey)?.n ?? 0;
  }

  /**
   * Sums per interval [b[i], b[i+1]) (b ascending, ≥ 2 instants) of an account's messages
   * (formKey "*"), a form's (its id) or those of no form ("").
   */
  intervals(accountId: string, formKey: string, b: number[]): IntervalSums[] {
    const prefixes = b.map(prefixOf);
    const cells = new Map<string, Row[]>();
    const put = (r: Row) => {
      const list = cells.get(r.bucket);
      if (list) list.push(r);
      else cells.set(r.bucket, [r]);
    };
    // Day rows come in bucket order (the primary key's); an interval takes those of its days.
    const dayRows = this.dayRange.all(accountId, formKey, prefixes[0].day, prefixes[prefixes.length - 1].day);
    for (const r of dayRows) put(r);
    const wanted: [Set<string>, Set<string>] = [new Set(), new Set()];
    for (const p of prefixes) for (const t of p.terms) if (t.level !== LEVEL_DAY) wanted[t.level - 1].add(t.bucket);
    for (let level = 1; level <= 2; level++) {
      const keys = wanted[level - 1];
      if (keys.size > 0) for (const r of this.byKeys.all(accountId, formKey, level, JSON.stringify([...keys]))) put(r);
    }
    const prefixSums = prefixes.map((p) => this.prefixSums(accountId, formKey, p, cells));
    const out: IntervalSums[] = [];
    let k = 0;
    for (let i = 0; i + 1 < b.length; i++) {
      const s = empty();
      // Whole UTC days from day(b[i]) up to (not including) day(b[i+1]).
      while (k < dayRows.length && dayRows[k].bucket < prefixes[i].day) k++;
      for (; k < dayRows.length && dayRows[k].bucket < prefixes[i + 1].day; k++) addRow(s, dayRows[k], 1);
      addSums(s, prefixSums[i + 1], 1);
      addSums(s, prefixSums[i], -1);
      out.push(s);
    }
    return out;
  }

  private prefixSums(accountId: string, formKey: string, p: Prefix, cells: Map<string, Row[]>): IntervalSums {
    const s = empty();
    for (const t of p.terms) for (const r of cells.get(t.bucket) ?? []) addRow(s, r, t.sign);
    if (p.residue) {
      const lo = new Date(p.residue[0]).toISOString();
      const hi = new Date(p.residue[1]).toISOString();
      const rows = formKey === "*" ? this.residueAll.all(accountId, lo, hi) : this.residueForm.all(accountId, lo, hi, formKey);
      for (const m of rows) {
        for (const d of rollupDeltas(factsOf(m))) {
          if (d.formId !== formKey || d.level !== LEVEL_DAY) continue;
          const [queued, sent, failed, cancelled, sent_ms, sent_timed] = d.values;
          addRow(s, { bucket: d.bucket, reason: d.reason, queued, sent, failed, cancelled, sent_ms, sent_timed }, 1);
        }
      }
    }
    return s;
  }
}

interface MessageRow {
  account_id: string;
  form_id: string | null;
  status: MessageFacts["status"];
  priority_rank: number;
  created_at: string;
  sent_at: string | null;
  failure_reason: string | null;
}

function factsOf(m: MessageRow): MessageFacts {
  return {
    accountId: m.account_id,
    formId: m.form_id,
    status: m.status,
    priorityRank: m.priority_rank,
    createdAt: m.created_at,
    sentAt: m.sent_at,
    failureReason: m.failure_reason,
  };
}

const QUARTER_SQL = "substr(created_at, 1, 14) || printf('%02d', CAST(substr(created_at, 15, 2) AS INTEGER) / 15 * 15)";
const RESPONSE_SQL = "CAST(round((julianday(sent_at) - julianday(created_at)) * 86400000.0) AS INTEGER)";
const ROLLUP_COLS = "account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed";
const SUMS = "SUM(queued), SUM(sent), SUM(failed), SUM(cancelled), SUM(sent_ms), SUM(sent_timed)";

/**
 * The statements that compute message_rollups from the messages alone into `table` (empty, with
 * message_rollups' columns), with a label each for progress — the same as migration 0015 does.
 */
export function rollupRebuildSteps(table: string): Array<{ label: string; sql: string }> {
  return [
    {
      label: "quarter hours",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS})
        SELECT account_id, coalesce(form_id, ''), 2, ${QUARTER_SQL}, '',
          SUM(status = 'queued'), SUM(status = 'sent'), SUM(status = 'failed'), SUM(status = 'cancelled'),
          SUM(CASE WHEN status = 'sent' AND sent_at IS NOT NULL THEN ${RESPONSE_SQL} ELSE 0 END), SUM(status = 'sent' AND sent_at IS NOT NULL)
        FROM messages GROUP BY 1, 2, 4`,
    },
    {
      label: "failure reasons",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS})
        SELECT account_id, coalesce(form_id, ''), 2, ${QUARTER_SQL}, '#' || coalesce(failure_reason, 'unknown'), 0, 0, COUNT(*), 0, 0, 0
        FROM messages WHERE status = 'failed' GROUP BY 1, 2, 4, 5`,
    },
    {
      label: "hours",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS}) SELECT account_id, form_id, 1, substr(bucket, 1, 13), reason, ${SUMS}
        FROM ${table} WHERE level = 2 GROUP BY 1, 2, 4, 5`,
    },
    {
      label: "days",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS}) SELECT account_id, form_id, 0, substr(bucket, 1, 10), reason, ${SUMS}
        FROM ${table} WHERE level = 1 GROUP BY 1, 2, 4, 5`,
    },
    {
      label: "whole accounts",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS}) SELECT account_id, '*', level, bucket, reason, ${SUMS}
        FROM ${table} WHERE form_id <> '*' GROUP BY 1, 3, 4, 5`,
    },
  ];
}
