import type { Database, Statement } from "bun:sqlite";
import { bucketsOf, REASON_LEVEL } from "../domain/rollup-buckets";

/**
 * Derived data of message inserts — message_counts, monthly_usage, message_rollups and the
 * contact's conversations row — as explicit deltas instead of per-row triggers.
 *
 * A writer that inserts a message calls `recordMessageInsert(sqlite, facts)` in the same
 * transaction. Inside a group-commit batch (src/db/group-commit.ts opens one with `beginBatch`)
 * the deltas are only remembered, summed, and written by `flush()` as one upsert per distinct
 * key just before the batch's COMMIT — for a batch of 64 webhook messages of one form that is
 * ~9 upserts instead of 192 trigger upserts. A job that fails is rolled back to its `mark()`, so
 * its deltas go with its SAVEPOINT. Outside a batch (CLI, tests, services with their own
 * transaction) a record is written at once. Any other writer (an applier on its own connection)
 * may wrap its transaction's work in `derivedCounts(sqlite).batch(fn)`.
 *
 * New submissions and new contacts of a form are recorded the same way (`recordFormRows`) into
 * the form's rollup rows (migration 0022), for form stats.
 *
 * Status changes and deletes keep these tables by trigger (migrations 0001, 0015 and 0022); usage is
 * never decreased (the monthly quota counts messages created). A conversation's newest activity
 * is raised to the newest message recorded for its contact (migration 0019 dropped the insert
 * trigger; received texts keep theirs), and never lowered, as the trigger did.
 */

export type { MessageStatus } from "../domain/statuses";
import type { MessageStatus } from "../domain/statuses";
import type { messages } from "./schema/messages";
import type { messageRollups } from "./schema/rollups";

/**
 * What the derived tables need of a message row: its account, form, conversation (contactId null:
 * none, e.g. a manual message to a bare number), status, priority rank, created and sent times
 * (ISO, as stored: "2026-03-08T07:44:10.123Z") and failure reason.
 */
export type MessageFacts = Pick<typeof messages.$inferSelect, "accountId" | "formId" | "contactId" | "priorityRank" | "createdAt" | "sentAt" | "failureReason"> & {
  status: MessageStatus;
};

type RollupRow = typeof messageRollups.$inferSelect;

/** sentAt − createdAt in whole ms, as migration 0015's SQL computes it. */
export function responseMs(createdAt: string, sentAt: string): number {
  return Date.parse(sentAt) - Date.parse(createdAt);
}

/** [queued, sent, failed, cancelled, sent_ms, sent_timed, submissions, new_contacts] */
export type RollupValues = [number, number, number, number, number, number, number, number];
/** Number of RollupValues columns. */
export const ROLLUP_VALUES = 8;
/** The columns of the submissions and the new contacts of a form (migration 0022). */
export const SUBMISSIONS = 6;
export const NEW_CONTACTS = 7;

/**
 * A form's new submissions and new contacts at one instant (migration 0022): rolled up in the
 * form's own rows only (no '*' or '' rows: form stats are their only reader), so a submission
 * adds to the very rows its message adds to and a batch writes no extra upsert for it.
 */
export type FormRowFacts = Pick<RollupRow, "accountId" | "formId" | "submissions" | "newContacts"> & { createdAt: string };
/** One rollup row's change: its key and its values (RollupValues order). */
export type RollupDelta = Pick<RollupRow, "accountId" | "formId" | "level" | "bucket" | "reason"> & { values: RollupValues };

const STATUS_COLUMN: Record<MessageStatus, number> = { queued: 0, sent: 1, failed: 2, cancelled: 3 };

/** The rollup rows one message adds to (×sign): 2 scopes × 3 levels, plus its reason rows (levels 3–5) if failed. */
export function rollupDeltas(m: MessageFacts, sign = 1): RollupDelta[] {
  const out: RollupDelta[] = [];
  const base: RollupValues = [0, 0, 0, 0, 0, 0, 0, 0];
  base[STATUS_COLUMN[m.status]] = sign;
  if (m.status === "sent" && m.sentAt !== null) {
    base[4] = sign * responseMs(m.createdAt, m.sentAt);
    base[5] = sign;
  }
  const buckets = bucketsOf(m.createdAt);
  for (const formId of ["*", m.formId ?? ""]) {
    for (let level = 0; level < 3; level++) {
      out.push({ accountId: m.accountId, formId, level, bucket: buckets[level], reason: "", values: [...base] as RollupValues });
      if (m.status === "failed") {
        out.push({ accountId: m.accountId, formId, level: REASON_LEVEL + level, bucket: buckets[level], reason: `#${m.failureReason ?? "unknown"}`, values: [0, 0, sign, 0, 0, 0, 0, 0] });
      }
    }
  }
  return out;
}

/** The rollup rows a form's submissions and new contacts add to: the form's 3 levels. */
export function formRowDeltas(f: FormRowFacts): RollupDelta[] {
  const buckets = bucketsOf(f.createdAt);
  return buckets.map((bucket, level) => ({ accountId: f.accountId, formId: f.formId, level, bucket, reason: "", values: [0, 0, 0, 0, 0, 0, f.submissions, f.newContacts] }));
}

const SEP = "\u0001";

export class DerivedCounts {
  private pending: Array<MessageFacts | FormRowFacts> = [];
  /** Incremented by every flush, so a mark taken before it rolls back nothing already written. */
  private epoch = 0;
  private inBatch = false;
  /** Prepared on the first flush: a connection that never writes messages needs no tables. */
  private statements: { count: Statement; usage: Statement; rollup: Statement; conversation: Statement } | undefined;
  /** Upserts written and messages recorded (tests, bench). */
  readonly stats = { recorded: 0, upserts: 0 };

  constructor(private readonly sqlite: Database) {}

  private prepared(): { count: Statement; usage: Statement; rollup: Statement; conversation: Statement } {
    return (this.statements ??= {
      count: this.sqlite.prepare(
        `INSERT INTO message_counts (account_id, status, priority_rank, n) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (account_id, status, priority_rank) DO UPDATE SET n = n + excluded.n`,
      ),
      usage: this.sqlite.prepare(
        `INSERT INTO monthly_usage (account_id, month, n) VALUES (?1, ?2, ?3)
         ON CONFLICT (account_id, month) DO UPDATE SET n = n + excluded.n`,
      ),
      rollup: this.sqlite.prepare(
        `INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed, submissions, new_contacts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued,
           sent = sent + excluded.sent, failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled,
           sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed,
           submissions = submissions + excluded.submissions, new_contacts = new_contacts + excluded.new_contacts`,
      ),
      // A contact deleted later in the same transaction took its messages with it (cascade): its
      // row is then not made, as the trigger's row would have gone with the contact.
      conversation: this.sqlite.prepare(
        `INSERT INTO conversations (contact_id, account_id, last_message_at, unread_count)
           SELECT ?1, ?2, ?3, 0 WHERE EXISTS (SELECT 1 FROM contacts WHERE id = ?1)
         ON CONFLICT (contact_id) DO UPDATE SET last_message_at = max(last_message_at, excluded.last_message_at)`,
      ),
    });
  }

  /** A message was inserted in the current transaction. */
  record(m: MessageFacts): void {
    this.stats.recorded++;
    this.pending.push(m);
    if (!this.inBatch) this.flush();
  }

  /** Submissions and/or new contacts of a form were inserted in the current transaction. */
  recordFormRows(f: FormRowFacts): void {
    this.stats.recorded++;
    this.pending.push(f);
    if (!this.inBatch) this.flush();
  }

  /** From now on records wait for `flush()` (the caller's COMMIT follows it). */
  beginBatch(): void {
    this.inBatch = true;
  }

  /** Position to roll back to when the job that follows fails. */
  mark(): number {
    return this.epoch * 1e9 + this.pending.length;
  }

  rollbackTo(mark: number): void {
    const epoch = Math.floor(mark / 1e9);
    this.pending.length = epoch === this.epoch ? Math.min(this.pending.length, mark - epoch * 1e9) : 0;
  }

  /** Writes what was recorded (summed per key) in the current transaction and ends the batch. */
  flush(): void {
    this.inBatch = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.epoch++;
    // Messages of a batch mostly share account, form, status and quarter hour: group them first
    // (one string key per message), then make the rollup rows once per group.
    const groups = new Map<string, { m: MessageFacts; n: number; ms: number; timed: number }>();
    // A form's submissions and new contacts, summed per minute (its buckets made once per group).
    const formRows = new Map<string, FormRowFacts>();
    const messages: MessageFacts[] = [];
    for (const x of batch) {
      if ("status" in x) {
        messages.push(x);
        continue;
      }
      const fk = `${x.accountId}${SEP}${x.formId}${SEP}${x.createdAt.slice(0, 16)}`;
      const have = formRows.get(fk);
      if (!have) formRows.set(fk, { ...x });
      else {
        have.submissions += x.submissions;
        have.newContacts += x.newContacts;
      }
    }
    for (const m of messages) {
      const gk = `${m.accountId}${SEP}${m.formId ?? ""}${SEP}${m.status}${SEP}${m.priorityRank}${SEP}${m.createdAt.slice(0, 16)}${SEP}${m.status === "failed" ? (m.failureReason ?? "unknown") : ""}`;
      let g = groups.get(gk);
      if (!g) groups.set(gk, (g = { m, n: 0, ms: 0, timed: 0 }));
      g.n++;
      if (m.status === "sent" && m.sentAt !== null) {
        g.ms += responseMs(m.createdAt, m.sentAt);
        g.timed++;
      }
    }
    // The newest message per contact: one upsert per conversation, not one per message.
    const conversations = new Map<string, { accountId: string; at: string }>();
    for (const m of messages) {
      if (m.contactId === null) continue;
      const c = conversations.get(m.contactId);
      if (!c) conversations.set(m.contactId, { accountId: m.accountId, at: m.createdAt });
      else if (m.createdAt > c.at) c.at = m.createdAt;
    }
    const counts = new Map<string, number>();
    const usage = new Map<string, number>();
    const rollups = new Map<string, RollupDelta>();
    const addRollup = (d: RollupDelta) => {
      const rk = `${d.accountId}${SEP}${d.formId}${SEP}${d.level}${SEP}${d.bucket}${SEP}${d.reason}`;
      const have = rollups.get(rk);
      if (!have) rollups.set(rk, d);
      else for (let i = 0; i < ROLLUP_VALUES; i++) have.values[i] += d.values[i];
    };
    for (const { m, n, ms, timed } of groups.values()) {
      const ck = `${m.accountId}${SEP}${m.status}${SEP}${m.priorityRank}`;
      counts.set(ck, (counts.get(ck) ?? 0) + n);
      const uk = `${m.accountId}${SEP}${m.createdAt.slice(0, 7)}`;
      usage.set(uk, (usage.get(uk) ?? 0) + n);
      for (const d of rollupDeltas(m)) {
        for (let i = 0; i < 4; i++) d.values[i] *= n;
        if (d.reason === "") {
          d.values[4] = ms;
          d.values[5] = timed;
        }
        addRollup(d);
      }
    }
    for (const f of formRows.values()) for (const d of formRowDeltas(f)) addRollup(d);
    const st = this.prepared();
    for (const [k, n] of counts) {
      const [a, s, r] = k.split(SEP);
      st.count.run(a, s, Number(r), n);
    }
    for (const [k, n] of usage) {
      const [a, month] = k.split(SEP);
      st.usage.run(a, month, n);
    }
    for (const d of rollups.values()) st.rollup.run(d.accountId, d.formId, d.level, d.bucket, d.reason, ...d.values);
    for (const [contactId, c] of conversations) st.conversation.run(contactId, c.accountId, c.at);
    this.stats.upserts += counts.size + usage.size + rollups.size + conversations.size;
  }

  /** Forgets what was recorded (the transaction rolled back). */
  discard(): void {
    this.inBatch = false;
    this.pending = [];
    this.epoch++;
  }

  /** Runs fn with records batched and flushed at its end; call inside your own transaction. */
  batch<T>(fn: () => T): T {
    if (this.inBatch) return fn();
    this.beginBatch();
    try {
      const out = fn();
      this.flush();
      return out;
    } catch (err) {
      this.discard();
      throw err;
    }
  }
}

const perConnection = new WeakMap<Database, DerivedCounts>();

/** The accumulator of a connection (one per Database object). */
export function derivedCounts(sqlite: Database): DerivedCounts {
  let d = perConnection.get(sqlite);
  if (!d) perConnection.set(sqlite, (d = new DerivedCounts(sqlite)));
  return d;
}

/** Every writer of a new message row calls this in the same transaction. */
export function recordMessageInsert(sqlite: Database, m: MessageFacts): void {
  derivedCounts(sqlite).record(m);
}

/** Every writer of new submissions or of new contacts with a form calls this in the same transaction. */
export function recordFormRows(sqlite: Database, f: FormRowFacts): void {
  derivedCounts(sqlite).recordFormRows(f);
}
