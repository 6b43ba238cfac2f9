import type { Database } from "bun:sqlite";
import type { RawRow } from "../row";
import type { messages } from "../../schema/messages";
import { MESSAGE_STATUSES } from "../../../domain/statuses";
import { LEVEL_DAY, REASON_LEVEL, prefixOf, type Prefix } from "../../../domain/rollup-buckets";
import { NEW_CONTACTS, ROLLUP_VALUES, rollupDeltas, SUBMISSIONS, type MessageFacts, type RollupValues } from "../../derived-counts";
import type { messageRollups } from "../../schema/rollups";

/**
 * Reads of message_rollups (migrations 0015, 0021) and sums over arbitrary time intervals: each
 * interval [b_i, b_{i+1}) is whole UTC days + prefix(b_{i+1}) − prefix(b_i)
 * (src/domain/rollup-buckets.ts), so a year of daily figures in any zone reads ~365 day rows and
 * one range of ≤ 12 hour rows (and ≤ 3 quarter rows) per boundary, never the messages themselves
 * (except a residue before an instant off the quarter hour, which no current zone has).
 */

/**
 * Sums of one interval: [queued, sent, failed, cancelled, sent_ms, sent_timed, submissions,
 * new_contacts] (the last two on a form's own rows only, migration 0022) and failed per reason.
 */
export interface IntervalSums {
  values: RollupValues;
  reasons: Map<string, number>;
}

/** Rollup rows to sum: one scope (form key), one level, buckets in [from, to). */
type Range = [formKey: string, level: number, from: string, to: string];

/** What a range query sums: a rollup row without its key columns. */
type Row = Omit<RawRow<typeof messageRollups>, "account_id" | "form_id" | "level">;

function empty(): IntervalSums {
  return { values: [0, 0, 0, 0, 0, 0, 0, 0], reasons: new Map() };
}

/** The sums of consecutive intervals: those of the interval they make up (values only). */
export function sumIntervals(parts: IntervalSums[]): IntervalSums {
  const s = empty();
  for (const p of parts) for (let i = 0; i < ROLLUP_VALUES; i++) s.values[i] += p.values[i];
  return s;
}

function addSums(into: IntervalSums, s: IntervalSums, sign: number): void {
  for (let i = 0; i < ROLLUP_VALUES; i++) into.values[i] += sign * s.values[i];
  for (const [k, n] of s.reasons) into.reasons.set(k, (into.reasons.get(k) ?? 0) + sign * n);
}

/** A bucket row ('' reason) into an interval's values. */
function addRow(into: IntervalSums, r: Row, sign: number): void {
  const v = into.values;
  v[0] += sign * r.queued;
  v[1] += sign * r.sent;
  v[2] += sign * r.failed;
  v[3] += sign * r.cancelled;
  v[4] += sign * r.sent_ms;
  v[5] += sign * r.sent_timed;
  v[SUBMISSIONS] += sign * r.submissions;
  v[NEW_CONTACTS] += sign * r.new_contacts;
}

function addReason(into: IntervalSums, reason: string, n: number): void {
  const key = reason.slice(1);
  into.reasons.set(key, (into.reasons.get(key) ?? 0) + n);
}

/** The ranges of [prefix(from) … prefix(to)) whole days: `to`'s prefix terms (+), `from`'s (−). */
function periodRanges(formKey: string, from: Prefix, to: Prefix, levelOffset: number): Array<[sign: number, range: Range]> {
  const out: Array<[number, Range]> = [];
  if (from.day < to.day) out.push([1, [formKey, LEVEL_DAY + levelOffset, from.day, to.day]]);
  for (const t of to.terms) out.push([t.sign, [formKey, t.level + levelOffset, t.from, t.to]]);
  for (const t of from.terms) out.push([-t.sign, [formKey, t.level + levelOffset, t.from, t.to]]);
  return out;
}

const DAY_ROWS = `SELECT bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed, submissions, new_contacts FROM message_rollups
  WHERE account_id = ?1 AND form_id = ?2 AND level = 0 AND bucket >= ?3 AND bucket < ?4 AND reason = '' ORDER BY bucket`;
const FORM_TOTAL = `SELECT SUM(queued + sent + failed + cancelled) AS n, SUM(submissions) AS s, SUM(new_contacts) AS c
  FROM message_rollups WHERE account_id = ?1 AND form_id = ?2 AND level = 0 AND reason = ''`;
// Ranges come as one JSON parameter (one statement whatever their number: a year in a zone off
// the UTC day has ~700), each summed by its own subquery — one seek and a short run of rows, no
// grouping (a GROUP BY over the joined rows sorted them: ~1.5× the time). The eight sums travel
// as one text (a row of six columns per range would need that GROUP BY). The ranges are read out
// of the JSON once (MATERIALIZED): a range's end is compared with every row it steps over, and
// `->>` there would parse the JSON text again for each.
const RANGES = "j(k, form_id, level, lo, hi) AS MATERIALIZED (SELECT key, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?2))";
const RANGE_SUMS = `WITH ${RANGES} SELECT j.k AS k, (SELECT SUM(r.queued) || ',' || SUM(r.sent) || ',' || SUM(r.failed) || ',' || SUM(r.cancelled) || ',' || SUM(r.sent_ms) || ',' || SUM(r.sent_timed)
    || ',' || SUM(r.submissions) || ',' || SUM(r.new_contacts)
  FROM message_rollups r WHERE r.account_id = ?1 AND r.form_id = j.form_id AND r.level = j.level AND r.bucket >= j.lo AND r.bucket < j.hi) AS s
  FROM j`;
const RANGE_REASONS = `WITH ${RANGES} SELECT j.k AS k, r.reason AS reason, SUM(r.failed) AS n FROM j CROSS JOIN message_rollups r
  ON r.account_id = ?1 AND r.form_id = j.form_id AND r.level = j.level AND r.bucket >= j.lo AND r.bucket < j.hi
  GROUP BY 1, 2`;
const RESIDUE_COLS = "account_id, form_id, status, priority_rank, created_at, sent_at, failure_reason";
// Every status spelled out: four ranges of (account_id, status, created_at) (migration 0019).
const STATUSES = `status IN (${MESSAGE_STATUSES.map((st) => `'${st}'`).join(", ")})`;
const RESIDUE_ALL = `SELECT ${RESIDUE_COLS} FROM messages WHERE account_id = ?1 AND ${STATUSES} AND created_at >= ?2 AND created_at < ?3`;
const RESIDUE_FORM = `SELECT ${RESIDUE_COLS} FROM messages WHERE account_id = ?1 AND ${STATUSES} AND coalesce(form_id, '') = ?4 AND created_at >= ?2 AND created_at < ?3`;
const RESIDUE_FORM_ROWS = `SELECT (SELECT COUNT(*) FROM submissions WHERE form_id = ?4 AND created_at >= ?2 AND created_at < ?3 AND account_id = ?1) AS s,
  (SELECT COUNT(*) FROM contacts WHERE form_id = ?4 AND created_at >= ?2 AND created_at < ?3 AND account_id = ?1) AS c`;

type FormTotal = { n: number | null; s: number | null; c: number | null } | null;

/** All-time messages, submissions and new contacts of a form. */
export function rollupFormTotals(sqlite: Database, accountId: string, formId: string): { messages: number; submissions: number; newContacts: number } {
  const r = sqlite.query(FORM_TOTAL).get(accountId, formId) as FormTotal;
  return { messages: r?.n ?? 0, submissions: r?.s ?? 0, newContacts: r?.c ?? 0 };
}

/** The value sums of each range (all zeros for a range with no rows), in one statement. */
function sumRanges(sqlite: Database, accountId: string, ranges: Range[]): RollupValues[] {
  const out: RollupValues[] = ranges.map(() => [0, 0, 0, 0, 0, 0, 0, 0]);
  if (ranges.length === 0) return out;
  for (const r of sqlite.query(RANGE_SUMS).all(accountId, JSON.stringify(ranges)) as Array<{ k: number; s: string | null }>) {
    if (r.s === null) continue;
    const v = out[r.k];
    const parts = r.s.split(",");
    for (let c = 0; c < ROLLUP_VALUES; c++) v[c] = Number(parts[c]);
  }
  return out;
}

/** Adds each range's sums (× its sign) into the sums its owner names: `owner[k]` = [index into `into`, sign] of `ranges[k]`. */
function addRangeSums(sqlite: Database, accountId: string, ranges: Range[], owner: Array<[index: number, sign: number]>, into: IntervalSums[]): void {
  sumRanges(sqlite, accountId, ranges).forEach((v, k) => {
    const [i, sign] = owner[k];
    const values = into[i].values;
    for (let c = 0; c < ROLLUP_VALUES; c++) values[c] += sign * v[c];
  });
}

/**
 * Sums per interval [b[i], b[i+1]) (b ascending, ≥ 2 instants) of an account's messages
 * (formKey "*"), a form's (its id) or those of no form ("").
 */
export function rollupIntervals(sqlite: Database, accountId: string, formKey: string, b: number[]): IntervalSums[] {
  const prefixes = b.map(prefixOf);
  if (b.length === 2) return [periodSums(sqlite, accountId, [formKey], prefixes)[0]];
  // Daily figures read every day row of the range anyway: a prefix's whole-day term (an
  // afternoon boundary is its day minus the hours after) comes from those rows, not a seek.
  const ranges: Range[] = [];
  const owner: Array<[i: number, sign: number]> = [];
  const dayTerms: Array<[i: number, sign: number, day: string]> = [];
  prefixes.forEach((p, i) => {
    for (const t of p.terms) {
      if (t.level === LEVEL_DAY) dayTerms.push([i, t.sign, p.day]);
      else {
        ranges.push([formKey, t.level, t.from, t.to]);
        owner.push([i, t.sign]);
      }
    }
  });
  const prefixSums = prefixes.map(() => empty());
  addRangeSums(sqlite, accountId, ranges, owner, prefixSums);
  prefixes.forEach((p, i) => {
    if (p.residue) addResidue(sqlite, prefixSums[i], { accountId, formKey, span: p.residue, reasons: false });
  });
  const first = prefixes[0].day;
  const last = prefixes[prefixes.length - 1].day;
  // Day rows come in bucket order; an interval takes those of its whole UTC days. The last
  // boundary's own day is read too, for its whole-day term.
  const dayRows = sqlite.query(DAY_ROWS).all(accountId, formKey, first, `${last}~`) as Row[];
  if (dayTerms.length > 0) {
    const byDay = new Map(dayRows.map((r) => [r.bucket, r]));
    for (const [i, sign, day] of dayTerms) {
      const r = byDay.get(day);
      if (r) addRow(prefixSums[i], r, sign);
    }
  }
  const out: IntervalSums[] = [];
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

/** A period [from, to) of several scopes (a period's totals per form: their ids, "*" or ""). */
export interface RollupPeriod {
  formKeys: string[];
  from: number;
  to: number;
}

/**
 * The value sums of [from, to) for each of several scopes (a period's totals per form), in one
 * statement: per scope its whole days as one range plus the two prefixes' terms.
 */
export function rollupPeriods(sqlite: Database, accountId: string, p: RollupPeriod): IntervalSums[] {
  return periodSums(sqlite, accountId, p.formKeys, [prefixOf(p.from), prefixOf(p.to)]);
}

function periodSums(sqlite: Database, accountId: string, formKeys: string[], prefixes: Prefix[]): IntervalSums[] {
  const ranges: Range[] = [];
  const owner: Array<[f: number, sign: number]> = [];
  formKeys.forEach((formKey, f) => {
    for (const [sign, range] of periodRanges(formKey, prefixes[0], prefixes[1], 0)) {
      ranges.push(range);
      owner.push([f, sign]);
    }
  });
  const out = formKeys.map(() => empty());
  addRangeSums(sqlite, accountId, ranges, owner, out);
  formKeys.forEach((formKey, f) => {
    prefixes.forEach((p, i) => {
      if (!p.residue) return;
      const residue = empty();
      addResidue(sqlite, residue, { accountId, formKey, span: p.residue, reasons: false });
      addSums(out[f], residue, i === 1 ? 1 : -1);
    });
  });
  return out;
}

/** One scope's period [from, to): an account's messages ("*"), a form's (its id) or those of no form (""). */
export interface RollupScope {
  formKey: string;
  from: number;
  to: number;
}

/** The failed messages per reason in [from, to) (a period's failureReasons). */
export function rollupFailureReasons(sqlite: Database, accountId: string, q: RollupScope): Map<string, number> {
  const { formKey } = q;
  const prefixes = [prefixOf(q.from), prefixOf(q.to)];
  // [from, to) = whole days + prefix(to) − prefix(from), as in intervals, on the reason levels.
  const ranges = periodRanges(formKey, prefixes[0], prefixes[1], REASON_LEVEL);
  const s = empty();
  if (ranges.length > 0) {
    const rows = sqlite.query(RANGE_REASONS).all(accountId, JSON.stringify(ranges.map(([, range]) => range))) as Array<{ k: number; reason: string; n: number }>;
    for (const r of rows) addReason(s, r.reason, ranges[r.k][0] * r.n);
  }
  prefixes.forEach((p, i) => {
    if (!p.residue) return;
    const residue = empty();
    addResidue(sqlite, residue, { accountId, formKey, span: p.residue, reasons: true });
    addSums(s, residue, i === 1 ? 1 : -1);
  });
  return s.reasons;
}

/** Messages in [lo, hi) counted one by one (an instant off the quarter hour: never in practice). */
function addResidue(sqlite: Database, into: IntervalSums, r: { accountId: string; formKey: string; span: [number, number]; reasons: boolean }): void {
  const { accountId, formKey, reasons } = r;
  const lo = new Date(r.span[0]).toISOString();
  const hi = new Date(r.span[1]).toISOString();
  const rows = (formKey === "*" ? sqlite.query(RESIDUE_ALL).all(accountId, lo, hi) : sqlite.query(RESIDUE_FORM).all(accountId, lo, hi, formKey)) as MessageRow[];
  for (const m of rows) {
    for (const d of rollupDeltas(factsOf(m))) {
      if (d.formId !== formKey) continue;
      if (d.level === LEVEL_DAY) for (let c = 0; c < ROLLUP_VALUES; c++) into.values[c] += d.values[c];
      else if (reasons && d.level === REASON_LEVEL + LEVEL_DAY) addReason(into, d.reason, d.values[2]);
    }
  }
  // A form's own rows also carry its submissions and new contacts (never '*' or '').
  if (!reasons && formKey !== "*" && formKey !== "") {
    const n = sqlite.query(RESIDUE_FORM_ROWS).get(accountId, lo, hi, formKey) as { s: number; c: number } | null;
    if (n) {
      into.values[SUBMISSIONS] += n.s;
      into.values[NEW_CONTACTS] += n.c;
    }
  }
}

/** The columns of a message the rollups read (residueCols). */
type MessageRow = Pick<RawRow<typeof messages>, "account_id" | "form_id" | "status" | "priority_rank" | "created_at" | "sent_at" | "failure_reason">;

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
const ROLLUP_COLS = "account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed, submissions, new_contacts";
const SUMS = "SUM(queued), SUM(sent), SUM(failed), SUM(cancelled), SUM(sent_ms), SUM(sent_timed), SUM(submissions), SUM(new_contacts)";
const QUARTER_OF = (table: string) => QUARTER_SQL.replaceAll("created_at", `${table}.created_at`);

/**
 * The statements that compute message_rollups from the messages alone into `table` (empty, with
 * message_rollups' columns), with a label each for progress — the rows migrations 0015, 0021 and
 * 0022 leave (and the messages, submissions and contacts of a form, the rows its writers record).
 */
export function rollupRebuildSteps(table: string): Array<{ label: string; sql: string }> {
  return [
    {
      label: "quarter hours",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS})
        SELECT account_id, coalesce(form_id, ''), 2, ${QUARTER_SQL}, '',
          SUM(status = 'queued'), SUM(status = 'sent'), SUM(status = 'failed'), SUM(status = 'cancelled'),
          SUM(CASE WHEN status = 'sent' AND sent_at IS NOT NULL THEN ${RESPONSE_SQL} ELSE 0 END), SUM(status = 'sent' AND sent_at IS NOT NULL), 0, 0
        FROM messages GROUP BY 1, 2, 4`,
    },
    {
      label: "submissions and new contacts",
      sql: `INSERT INTO ${table} (account_id, form_id, level, bucket, reason, submissions, new_contacts)
        SELECT account_id, form_id, 2, q, '', SUM(s), SUM(c) FROM (
          SELECT account_id, form_id, ${QUARTER_OF("submissions")} AS q, 1 AS s, 0 AS c FROM submissions
          UNION ALL SELECT account_id, form_id, ${QUARTER_OF("contacts")}, 0, 1 FROM contacts WHERE form_id IS NOT NULL)
        WHERE true GROUP BY 1, 2, 4
        ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET submissions = excluded.submissions, new_contacts = excluded.new_contacts`,
    },
    {
      label: "failure reasons",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS})
        SELECT account_id, coalesce(form_id, ''), ${REASON_LEVEL + 2}, ${QUARTER_SQL}, '#' || coalesce(failure_reason, 'unknown'), 0, 0, COUNT(*), 0, 0, 0, 0, 0
        FROM messages WHERE status = 'failed' GROUP BY 1, 2, 4, 5`,
    },
    {
      label: "hours",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS}) SELECT account_id, form_id, level - 1, substr(bucket, 1, 13), reason, ${SUMS}
        FROM ${table} WHERE level IN (2, ${REASON_LEVEL + 2}) GROUP BY 1, 2, 3, 4, 5`,
    },
    {
      label: "days",
      sql: `INSERT INTO ${table} (${ROLLUP_COLS}) SELECT account_id, form_id, level - 1, substr(bucket, 1, 10), reason, ${SUMS}
        FROM ${table} WHERE level IN (1, ${REASON_LEVEL + 1}) GROUP BY 1, 2, 3, 4, 5`,
    },
    {
      label: "whole accounts",
      // Messages only: a form's submissions and new contacts are not summed over the account.
      sql: `INSERT INTO ${table} (${ROLLUP_COLS}) SELECT account_id, '*', level, bucket, reason, SUM(queued), SUM(sent), SUM(failed), SUM(cancelled), SUM(sent_ms), SUM(sent_timed), 0, 0
        FROM ${table} WHERE form_id <> '*' AND (queued <> 0 OR sent <> 0 OR failed <> 0 OR cancelled <> 0) GROUP BY 1, 3, 4, 5`,
    },
  ];
}
