/**
 * `textwire doctor`: every structure derived from the messages and contacts, compared with a
 * from-scratch computation (--check) or rebuilt from it (--rebuild).
 *
 *  - message_rollups (analytics, form stats): equal, row for row, to a recomputation from the
 *    messages, submissions and contacts (rows of all zeros, left by status changes and deletes,
 *    are ignored).
 *  - message_counts (list summaries): equal to COUNT(*) per account, status and priority.
 *  - monthly_usage (quota): never below the messages still there per account and month (it is
 *    never decreased when messages are deleted, so it may be above).
 *  - contacts_fts (search): FTS5's own integrity check against the contacts, with the contacts
 *    not indexed yet (contacts_fts_pending, migration 0023) indexed first, in a transaction of its
 *    own that is rolled back; a pending row whose contact is gone is a difference too.
 *  - contact_tags (tag filters, migration 0020): one row per tag in each contact's tags column,
 *    keyed on the contact's rowid, carrying the contact's status (migration 0025).
 *  - conversations (newest activity per contact): a row for every contact with messages in either
 *    direction, its time never before the newest of them (deletes do not lower it, so it may be
 *    after). Unread counts are the inbox's own state (marked read by the owner) and not checked.
 *  - submission_intake (the webhook's intake): an unapplied entry is normal (the applier is
 *    behind); a row at or below the applied mark (its apply committed, it should be gone) or an
 *    unapplied row whose submission already exists is a difference.
 *
 * A check reads in one transaction, so it sees one consistent state even while the server runs;
 * a rebuild writes in one IMMEDIATE transaction (writers wait, nothing half-done is ever seen).
 */
import type { Database } from "bun:sqlite";
import { rollupRebuildSteps } from "../db/message-rollups";
import { intakeMismatches } from "../db/stores/intake";
import { IntakeApplier, type IntakeEntry } from "./intake/applier";
import { searchIndexDifferences } from "../db/stores/contact-search-pending";

export interface Difference {
  structure: "message_rollups" | "message_counts" | "monthly_usage" | "contacts_fts" | "contact_tags" | "submission_intake" | "conversations";
  /** What differs, for a person: the key, the value found and the value expected. */
  detail: string;
}

export interface CheckResult {
  structures: string[];
  differences: Difference[];
  /** Total differing rows per structure (differences lists at most SHOWN_MAX of each). */
  counts: Record<string, number>;
}

export const SHOWN_MAX = 20;
/** Per contact with messages in either direction: its account and newest activity. */
const NEWEST_ACTIVITY_SQL = `SELECT c.id AS contact_id, c.account_id, max(a.at) AS at FROM (
    SELECT contact_id, max(created_at) AS at FROM messages WHERE contact_id IS NOT NULL GROUP BY contact_id
    UNION ALL SELECT contact_id, max(received_at) FROM inbound_messages GROUP BY contact_id) a
  JOIN contacts c ON c.id = a.contact_id GROUP BY c.id`;
const VALUES = "queued, sent, failed, cancelled, sent_ms, sent_timed, submissions, new_contacts";
const NONZERO = "(queued <> 0 OR sent <> 0 OR failed <> 0 OR cancelled <> 0 OR sent_ms <> 0 OR sent_timed <> 0 OR submissions <> 0 OR new_contacts <> 0)";
const TEMP_ROLLUPS = "temp.doctor_rollups";
/** contact_tags as the contacts' tags and status columns say it should be (the rows the triggers of migrations 0020 and 0025 write). */
const CONTACT_TAGS_EXPECTED = "SELECT c.account_id AS account_id, j.value AS tag, c.rowid AS contact_rowid, c.status AS status FROM contacts c, json_each(c.tags) j WHERE c.tags <> '[]'";

export function checkDerived(sqlite: Database): CheckResult {
  const differences: Difference[] = [];
  const counts: Record<string, number> = { message_rollups: 0, message_counts: 0, monthly_usage: 0, contacts_fts: 0, contact_tags: 0, submission_intake: 0, conversations: 0 };
  const note = (structure: Difference["structure"], detail: string) => {
    counts[structure]++;
    if (counts[structure] <= SHOWN_MAX) differences.push({ structure, detail });
  };
  sqlite.exec(`DROP TABLE IF EXISTS ${TEMP_ROLLUPS}`);
  sqlite.exec(
    `CREATE TABLE ${TEMP_ROLLUPS} (account_id TEXT NOT NULL, form_id TEXT NOT NULL, level INTEGER NOT NULL, bucket TEXT NOT NULL,
       reason TEXT NOT NULL, queued INTEGER NOT NULL DEFAULT 0, sent INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
       cancelled INTEGER NOT NULL DEFAULT 0, sent_ms INTEGER NOT NULL DEFAULT 0, sent_timed INTEGER NOT NULL DEFAULT 0,
       submissions INTEGER NOT NULL DEFAULT 0, new_contacts INTEGER NOT NULL DEFAULT 0,
       PRIMARY KEY (account_id, form_id, level, bucket, reason)) WITHOUT ROWID`,
  );
  // Its own (IMMEDIATE) transaction: it indexes the pending contacts, rolled back; see searchIndexDifferences.
  for (const d of searchIndexDifferences(sqlite)) note("contacts_fts", d);
  try {
    sqlite.transaction(() => {
      for (const step of rollupRebuildSteps(TEMP_ROLLUPS)) sqlite.exec(step.sql);
      const key = "account_id, form_id, level, bucket, reason";
      const rows = sqlite
        .query(
          `SELECT ${key}, ${VALUES}, 'found' AS side FROM (SELECT ${key}, ${VALUES} FROM main.message_rollups WHERE ${NONZERO}
             EXCEPT SELECT ${key}, ${VALUES} FROM ${TEMP_ROLLUPS})
           UNION ALL
           SELECT ${key}, ${VALUES}, 'expected' AS side FROM (SELECT ${key}, ${VALUES} FROM ${TEMP_ROLLUPS}
             EXCEPT SELECT ${key}, ${VALUES} FROM main.message_rollups WHERE ${NONZERO})
           ORDER BY 1, 2, 3, 4, 5, side DESC`,
        )
        .all() as Array<Record<string, string | number>>;
      for (const r of rows) {
        note(
          "message_rollups",
          `${r.side} account ${r.account_id} form ${r.form_id || "(none)"} ${["day", "hour", "quarter"][(r.level as number) % 3]} ${r.bucket}` +
            `${r.reason ? ` reason ${String(r.reason).slice(1)}` : ""}: queued ${r.queued}, sent ${r.sent}, failed ${r.failed}, cancelled ${r.cancelled}, ` +
            `response ms ${r.sent_ms} over ${r.sent_timed}, submissions ${r.submissions}, new contacts ${r.new_contacts}`,
        );
      }
      const mc = sqlite
        .query(
          `WITH e AS (SELECT account_id, status, priority_rank, COUNT(*) AS n FROM messages GROUP BY 1, 2, 3),
                f AS (SELECT account_id, status, priority_rank, n FROM message_counts WHERE n <> 0)
           SELECT k.account_id, k.status, k.priority_rank, coalesce(f.n, 0) AS found, coalesce(e.n, 0) AS expected
           FROM (SELECT account_id, status, priority_rank FROM e UNION SELECT account_id, status, priority_rank FROM f) k
           LEFT JOIN e USING (account_id, status, priority_rank) LEFT JOIN f USING (account_id, status, priority_rank)
           WHERE coalesce(f.n, 0) <> coalesce(e.n, 0) ORDER BY 1, 2, 3`,
        )
        .all() as Array<{ account_id: string; status: string; priority_rank: number; found: number; expected: number }>;
      for (const r of mc) note("message_counts", `account ${r.account_id} ${r.status} priority rank ${r.priority_rank}: found ${r.found}, expected ${r.expected}`);
      const mu = sqlite
        .query(
          `SELECT e.account_id, e.month, coalesce(u.n, 0) AS found, e.n AS expected
           FROM (SELECT account_id, substr(created_at, 1, 7) AS month, COUNT(*) AS n FROM messages GROUP BY 1, 2) e
           LEFT JOIN monthly_usage u ON u.account_id = e.account_id AND u.month = e.month
           WHERE coalesce(u.n, 0) < e.n ORDER BY 1, 2`,
        )
        .all() as Array<{ account_id: string; month: string; found: number; expected: number }>;
      for (const r of mu) note("monthly_usage", `account ${r.account_id} ${r.month}: found ${r.found}, expected at least ${r.expected}`);
      const cv = sqlite
        .query(
          `SELECT e.contact_id, e.account_id, v.account_id AS found_account, v.last_message_at AS found, e.at AS expected
           FROM (${NEWEST_ACTIVITY_SQL}) e LEFT JOIN conversations v ON v.contact_id = e.contact_id
           WHERE v.contact_id IS NULL OR v.account_id <> e.account_id OR v.last_message_at < e.at ORDER BY 1`,
        )
        .all() as Array<{ contact_id: string; account_id: string; found_account: string | null; found: string | null; expected: string }>;
      for (const r of cv) {
        note(
          "conversations",
          r.found === null
            ? `contact ${r.contact_id}: no conversation, expected one with activity at ${r.expected}`
            : r.found_account !== r.account_id
              ? `contact ${r.contact_id}: conversation of account ${r.found_account}, expected ${r.account_id}`
              : `contact ${r.contact_id}: newest activity found ${r.found}, expected at least ${r.expected}`,
        );
      }
      const tags = sqlite
        .query(
          `SELECT account_id, tag, contact_rowid, status, 'found' AS side FROM (SELECT account_id, tag, contact_rowid, status FROM contact_tags EXCEPT ${CONTACT_TAGS_EXPECTED})
           UNION ALL
           SELECT account_id, tag, contact_rowid, status, 'expected' AS side FROM (${CONTACT_TAGS_EXPECTED} EXCEPT SELECT account_id, tag, contact_rowid, status FROM contact_tags)
           ORDER BY 1, 3, 2, 5`,
        )
        .all() as Array<{ account_id: string; tag: string; contact_rowid: number; status: string; side: string }>;
      for (const r of tags) {
        note("contact_tags", `${r.side === "found" ? "extra" : "missing"} tag ${JSON.stringify(r.tag)} (status ${r.status}) of account ${r.account_id}'s contact at rowid ${r.contact_rowid}`);
      }
      for (const m of intakeMismatches(sqlite)) {
        note(
          "submission_intake",
          m.applied
            ? `entry ${m.seq} (submission ${m.submissionId}) is marked applied but still in the intake${m.present ? "" : ", and its submission or message is missing"}`
            : `entry ${m.seq} is not applied yet but its submission ${m.submissionId} already exists`,
        );
      }
    })();
  } finally {
    sqlite.exec(`DROP TABLE IF EXISTS ${TEMP_ROLLUPS}`);
  }
  return { structures: Object.keys(counts), differences, counts };
}

/** Rebuilds every derived structure from scratch in one transaction; `progress` gets a line per step. */
export function rebuildDerived(sqlite: Database, progress: (line: string) => void = () => {}): { durationMs: number } {
  const t0 = performance.now();
  const step = (label: string, fn: () => void) => {
    const s = performance.now();
    fn();
    progress(`  ${label} (${Math.round(performance.now() - s)} ms)`);
  };
  const messages = (sqlite.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number }).n;
  const contacts = (sqlite.query("SELECT COUNT(*) AS n FROM contacts").get() as { n: number }).n;
  progress(`Rebuilding derived data from ${messages} message(s) and ${contacts} contact(s)…`);
  sqlite.transaction(() => {
    // First, so the counts below include what it applies.
    step("submission_intake", () => repairIntake(sqlite, progress));
    step("message_rollups: cleared", () => sqlite.run("DELETE FROM message_rollups"));
    for (const s of rollupRebuildSteps("message_rollups")) step(`message_rollups: ${s.label}`, () => sqlite.run(s.sql));
    step("message_counts", () => {
      sqlite.run("DELETE FROM message_counts");
      sqlite.run(
        "INSERT INTO message_counts (account_id, status, priority_rank, n) SELECT account_id, status, priority_rank, COUNT(*) FROM messages GROUP BY 1, 2, 3",
      );
    });
    step("monthly_usage (raised where below the messages present)", () =>
      sqlite.run(
        `INSERT INTO monthly_usage (account_id, month, n)
           SELECT account_id, substr(created_at, 1, 7), COUNT(*) FROM messages GROUP BY 1, 2
         ON CONFLICT (account_id, month) DO UPDATE SET n = max(n, excluded.n)`,
      ),
    );
    step("contacts_fts", () => {
      sqlite.run("INSERT INTO contacts_fts (contacts_fts) VALUES ('rebuild')");
      sqlite.run("DELETE FROM contacts_fts_pending");
    });
    step("contact_tags", () => {
      sqlite.run("DELETE FROM contact_tags");
      sqlite.run(`INSERT OR IGNORE INTO contact_tags (account_id, tag, contact_rowid, status) ${CONTACT_TAGS_EXPECTED}`);
    });
    step("conversations (raised where behind the messages present)", () =>
      sqlite.run(
        `INSERT INTO conversations (contact_id, account_id, last_message_at, unread_count)
           SELECT contact_id, account_id, at, 0 FROM (${NEWEST_ACTIVITY_SQL}) WHERE true
         ON CONFLICT (contact_id) DO UPDATE SET account_id = excluded.account_id, last_message_at = max(last_message_at, excluded.last_message_at)`,
      ),
    );
  })();
  const durationMs = Math.round(performance.now() - t0);
  progress(`Done in ${durationMs} ms.`);
  return { durationMs };
}

/**
 * Intake rows out of step (see checkDerived): a row marked applied whose rows are missing is
 * applied now; every such row then leaves the intake (its rows are in the database).
 */
function repairIntake(sqlite: Database, progress: (line: string) => void): void {
  const mismatches = intakeMismatches(sqlite);
  if (mismatches.length === 0) return;
  const applier = new IntakeApplier(sqlite);
  const entry = sqlite.prepare<{ entry: string }, [number]>("SELECT entry FROM submission_intake WHERE seq = ?");
  const remove = sqlite.prepare<unknown, [number]>("DELETE FROM submission_intake WHERE seq = ?");
  for (const m of mismatches) {
    if (m.applied && !m.present) {
      try {
        sqlite.run("SAVEPOINT doctor_intake");
        applier.applyEntry(JSON.parse(entry.get(m.seq)!.entry) as IntakeEntry);
        sqlite.run("RELEASE doctor_intake");
        progress(`    intake entry ${m.seq}: applied`);
      } catch (err) {
        sqlite.run("ROLLBACK TO doctor_intake");
        sqlite.run("RELEASE doctor_intake");
        progress(`    intake entry ${m.seq}: not applicable (${(err as Error).message}); removed`);
      }
    }
    remove.run(m.seq);
  }
}
