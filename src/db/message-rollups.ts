import type { Database, Statement } from "bun:sqlite";
import { LEVEL_DAY, prefixOf } from "../domain/rollup-buckets";
import { rollupDeltas, type MessageFacts, type RollupValues } from "./derived-counts";

/**
 * Reads of message_rollups (migration 0015) and sums over arbitrary time intervals: each interval
 * [b_i, b_{i+1}) is whole UTC days + prefix(b_{i+1}) − prefix(b_i) (src/domain/rollup-buckets.ts),
 * so a year of daily figures in any zone reads ~365 day rows and one range of ≤ 12 hour rows (and
 * ≤ 3 quarter rows) per boundary, never the messages themselves (except a residue before an instant off the quarter
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

/** The sums of consecutive intervals: those of the interval they make up (values only). */
export function sumIntervals(parts: IntervalSums[]): IntervalSums {
  const s = empty();
  for (const p of parts) for (let i = 0; i < 6; i++) s.values[i] += p.values[i];
  return s;
}

function addSums(into: IntervalSums, s: IntervalSums, sign: number): void {
  for (let i = 0; i < 6; i++) into.values[i] += sign * s.values[i];
  for (const [k, n] of s.reasons) into.reasons.set(k, (into.reasons.get(k) ?? 0) + sign * n);
}

const VALUE_SUMS = (sign: string) =>
  ["queued", "sent", "failed", "cancelled", "sent_ms", "sent_timed"].map((c) => `coalesce(SUM(${sign}r.${c}), 0) AS ${c}`).join(", ");

export class RollupStore {
  private readonly dayRows: Statement<Row, [string, string, string, string]>;
  private readonly daySum: Statement<Row, [string, string, string, string]>;
  private readonly dayReasons: Statement<Row, [string, string, string, string]>;
  private readonly formTotal: Statement<{ n: number | null }, [string, string]>;
  private readonly termSums: Statement<Row & { i: number }, [string, string, string]>;
  private readonly termReasons: Statement<Row & { i: number }, [string, string, string]>;
  private readonly residueAll: Statement<MessageRow, [string, string, string]>;
  private readonly residueForm: Statement<MessageRow, [string, string, string, string]>;

  constructor(private readonly sqlite: Database) {
    const days = "FROM message_rollups r WHERE r.account_id = ?1 AND r.form_id = ?2 AND r.level = 0 AND r.bucket >= ?3 AND r.bucket < ?4";
    this.dayRows = sqlite.prepare(`SELECT ${COLS} ${days} AND r.reason = '' ORDER BY r.bucket`);
    this.daySum = sqlite.prepare(`SELECT '' AS bucket, '' AS reason, ${VALUE_SUMS("")} ${days} AND r.reason = ''`);
    this.dayReasons = sqlite.prepare(`SELECT '' AS bucket, r.reason AS reason, ${VALUE_SUMS("")} ${days} AND r.reason <> '' GROUP BY r.reason`);
    this.formTotal = sqlite.prepare(
      `SELECT SUM(queued + sent + failed + cancelled) AS n FROM message_rollups WHERE account_id = ?1 AND form_id = ?2 AND level = 0 AND reason = ''`,
    );
    // Prefix terms, summed per prefix i inside SQLite: one primary-key range per term. The terms
    // come as one JSON parameter (a prepared statement, whatever their number: compiling a
    // literal VALUES list of a year's ~1,100 terms per call cost more than running it), read
    // once into a materialized list that drives the join (CROSS JOIN keeps it outside).
    const head = `WITH j(i, sign, level, lo, hi) AS MATERIALIZED (SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?3))`;
    const from = `FROM j CROSS JOIN message_rollups r ON r.account_id = ?1 AND r.form_id = ?2 AND r.level = j.level AND r.bucket >= j.lo AND r.bucket < j.hi`;
    this.termSums = sqlite.prepare(`${head} SELECT j.i AS i, '' AS bucket, '' AS reason, ${VALUE_SUMS("j.sign * ")} ${from} AND r.reason = '' GROUP BY 1`);
    this.termReasons = sqlite.prepare(`${head} SELECT j.i AS i, '' AS bucket, r.reason AS reason, ${VALUE_SUMS("j.sign * ")} ${from} AND r.reason <> '' GROUP BY 1, 3`);
    const residueCols = "account_id, form_id, status, priority_rank, created_at, sent_at, failure_reason";
    // Every status spelled out: four ranges of (account_id, status, created_at) (migration 0019).
    const statuses = "status IN ('queued', 'sent', 'failed', 'cancelled')";
    this.residueAll = sqlite.prepare(`SELECT ${residueCols} FROM messages WHERE account_id = ?1 AND ${statuses} AND created_at >= ?2 AND created_at < ?3`);
    this.residueForm = sqlite.prepare(
      `SELECT ${residueCols} FROM messages WHERE account_id = ?1 AND ${statuses} AND coalesce(form_id, '') = ?4 AND created_at >= ?2 AND created_at < ?3`,
    );
  }

  /** All-time number of messages of a form (or of an account with formKey "*"). */
  total(accountId: string, formKey: string): number {
    return this.formTotal.get(accountId, formKey)?.n ?? 0;
  }

  /**
   * Sums per interval [b[i], b[i+1]) (b ascending, ≥ 2 instants) of an account's messages
   * (formKey "*"), a form's (its id) or those of no form (""). Failed messages per reason only
   * with `reasons` and two instants (a period's totals).
   */
  intervals(accountId: string, formKey: string, b: number[], opts: { reasons?: boolean } = {}): IntervalSums[] {
    const prefixes = b.map(prefixOf);
    const reasons = opts.reasons === true && b.length === 2;
    const terms: Array<[i: number, sign: number, level: number, from: string, to: string]> = [];
    // Daily figures read every day row of the range anyway: a prefix's whole-day term (an
    // afternoon boundary is its day minus the hours after) comes from those rows, not a seek.
    const daily = b.length > 2;
    const dayTerms: Array<[i: number, sign: number, day: string]> = [];
    prefixes.forEach((p, i) => {
      for (const t of p.terms) {
        if (daily && t.level === LEVEL_DAY) dayTerms.push([i, t.sign, p.day]);
        else terms.push([i, t.sign, t.level, t.from, t.to]);
      }
    });
    const prefixSums = prefixes.map(() => empty());
    if (terms.length > 0) {
      const json = JSON.stringify(terms);
      for (const r of this.termSums.all(accountId, formKey, json)) addRow(prefixSums[r.i], r, 1);
      if (reasons) for (const r of this.termReasons.all(accountId, formKey, json)) addRow(prefixSums[r.i], r, 1);
    }
    prefixes.forEach((p, i) => {
      if (p.residue) this.addResidue(prefixSums[i], accountId, formKey, p.residue, reasons);
    });
    const first = prefixes[0].day;
    const last = prefixes[prefixes.length - 1].day;
    const out: IntervalSums[] = [];
    if (b.length === 2) {
      const s = empty();
      for (const r of this.daySum.all(accountId, formKey, first, last)) addRow(s, r, 1);
      if (reasons) for (const r of this.dayReasons.all(accountId, formKey, first, last)) addRow(s, r, 1);
      addSums(s, prefixSums[1], 1);
      addSums(s, prefixSums[0], -1);
      return [s];
    }
    // Day rows come in bucket order; an interval takes those of its whole UTC days. The last
    // boundary's own day is read too, for its whole-day term.
    const dayRows = this.dayRows.all(accountId, formKey, first, `${last}~`);
    if (dayTerms.length > 0) {
      const byDay = new Map(dayRows.map((r) => [r.bucket, r]));
      for (const [i, sign, day] of dayTerms) {
        const r = byDay.get(day);
        if (r) addRow(prefixSums[i], r, sign);
      }
    }
    let k = 0;
    for (let i = 0; i + 1 < b.length; i++) {
      const s = empty();
      while (k < dayRows.length && dayRows[k].bucket < prefixes[i].day) k++;
      for (; k < dayRows.length && dayRows[k].bucket < prefixes[i + 1].day; k++) addRow(s, dayRows[k], 1);
      addSums(s, prefixSums[i + 1], 1);
      addSums(s, prefixSums[i], -1);
      out.push(s);
    }
    return out;
  }

  /** The failed messages per reason in [from, to) (a period's failureReasons). */
  failureReasons(accountId: string, formKey: string, from: number, to: number): Map<string, number> {
    const prefixes = [prefixOf(from), prefixOf(to)];
    const terms: Array<[i: number, sign: number, level: number, from: string, to: string]> = [];
    prefixes.forEach((p, i) => {
      for (const t of p.terms) terms.push([i, t.sign, t.level, t.from, t.to]);
    });
    const s = empty();
    // [from, to) = whole days + prefix(to) − prefix(from), as in intervals.
    if (terms.length > 0) for (const r of this.termReasons.all(accountId, formKey, JSON.stringify(terms))) addRow(s, r, r.i === 1 ? 1 : -1);
    prefixes.forEach((p, i) => {
      if (!p.residue) return;
      const residue = empty();
      this.addResidue(residue, accountId, formKey, p.residue, true);
      addSums(s, residue, i === 1 ? 1 : -1);
    });
    for (const r of this.dayReasons.all(accountId, formKey, prefixes[0].day, prefixes[1].day)) addRow(s, r, 1);
    return s.reasons;
  }

  /** Messages in [lo, hi) counted one by one (an instant off the quarter hour: never in practice). */
  private addResidue(into: IntervalSums, accountId: string, formKey: string, [from, to]: [number, number], reasons: boolean): void {
    const lo = new Date(from).toISOString();
    const hi = new Date(to).toISOString();
    const rows = formKey === "*" ? this.residueAll.all(accountId, lo, hi) : this.residueForm.all(accountId, lo, hi, formKey);
    for (const m of rows) {
      for (const d of rollupDeltas(factsOf(m))) {
        if (d.formId !== formKey || d.level !== LEVEL_DAY || (!reasons && d.reason !== "")) continue;
        const [queued, sent, failed, cancelled, sent_ms, sent_timed] = d.values;
        addRow(into, { bucket: d.bucket, reason: d.reason, queued, sent, failed, cancelled, sent_ms, sent_timed }, 1);
      }
    }
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
    contactId: null,
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
