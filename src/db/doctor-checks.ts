/**
 * The statements of `textwire doctor` (src/services/doctor.ts holds what it reports and in which
 * transaction): each derived structure compared with a from-scratch computation, and the steps
 * that rebuild it. Infrastructure over several tables — message_rollups, message_counts,
 * monthly_usage, contact_tags, conversations, submission_intake — so it lives beside them in
 * src/db rather than in one entity's store.
 */
import type { Database } from "bun:sqlite";
import { rollupRebuildSteps } from "./stores/messages/rollups";
import type { RawRow } from "./stores/row";
import type { messageRollups } from "./schema/rollups";
import type { contactTags } from "./schema/contacts";

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


/** Creates the scratch table the rollups are recomputed into (dropped by dropRollupScratch). */
export function createRollupScratch(sqlite: Database): void {
  dropRollupScratch(sqlite);
  sqlite.exec(
    `CREATE TABLE ${TEMP_ROLLUPS} (account_id TEXT NOT NULL, form_id TEXT NOT NULL, level INTEGER NOT NULL, bucket TEXT NOT NULL,
       reason TEXT NOT NULL, queued INTEGER NOT NULL DEFAULT 0, sent INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
       cancelled INTEGER NOT NULL DEFAULT 0, sent_ms INTEGER NOT NULL DEFAULT 0, sent_timed INTEGER NOT NULL DEFAULT 0,
       submissions INTEGER NOT NULL DEFAULT 0, new_contacts INTEGER NOT NULL DEFAULT 0,
       PRIMARY KEY (account_id, form_id, level, bucket, reason)) WITHOUT ROWID`,
  );
}

export function dropRollupScratch(sqlite: Database): void {
  sqlite.exec(`DROP TABLE IF EXISTS ${TEMP_ROLLUPS}`);
}

/** A rollup row found in the table but not in the recomputation, or the other way round. */
export type RollupDifference = { side: "found" | "expected" } & RawRow<typeof messageRollups>;

/** Recomputes the rollups into the scratch table and returns the rows (not all zero) that differ. */
export function rollupDifferences(sqlite: Database): RollupDifference[] {
  for (const step of rollupRebuildSteps(TEMP_ROLLUPS)) sqlite.exec(step.sql);
  const key = "account_id, form_id, level, bucket, reason";
  return sqlite
    .query(
      `SELECT ${key}, ${VALUES}, 'found' AS side FROM (SELECT ${key}, ${VALUES} FROM main.message_rollups WHERE ${NONZERO}
         EXCEPT SELECT ${key}, ${VALUES} FROM ${TEMP_ROLLUPS})
       UNION ALL
       SELECT ${key}, ${VALUES}, 'expected' AS side FROM (SELECT ${key}, ${VALUES} FROM ${TEMP_ROLLUPS}
         EXCEPT SELECT ${key}, ${VALUES} FROM main.message_rollups WHERE ${NONZERO})
       ORDER BY 1, 2, 3, 4, 5, side DESC`,
    )
    .all() as RollupDifference[];
}

/** message_counts rows that differ from COUNT(*) per account, status and priority. */
export function messageCountDifferences(sqlite: Database): Array<{ account_id: string; status: string; priority_rank: number; found: number; expected: number }> {
  return sqlite
    .query(
      `WITH e AS (SELECT account_id, status, priority_rank, COUNT(*) AS n FROM messages GROUP BY 1, 2, 3),
            f AS (SELECT account_id, status, priority_rank, n FROM message_counts WHERE n <> 0)
       SELECT k.account_id, k.status, k.priority_rank, coalesce(f.n, 0) AS found, coalesce(e.n, 0) AS expected
       FROM (SELECT account_id, status, priority_rank FROM e UNION SELECT account_id, status, priority_rank FROM f) k
       LEFT JOIN e USING (account_id, status, priority_rank) LEFT JOIN f USING (account_id, status, priority_rank)
       WHERE coalesce(f.n, 0) <> coalesce(e.n, 0) ORDER BY 1, 2, 3`,
    )
    .all() as Array<{ account_id: string; status: string; priority_rank: number; found: number; expected: number }>;
}

/** Months whose monthly_usage is below the messages still there. */
export function monthlyUsageShortfalls(sqlite: Database): Array<{ account_id: string; month: string; found: number; expected: number }> {
  return sqlite
    .query(
      `SELECT e.account_id, e.month, coalesce(u.n, 0) AS found, e.n AS expected
       FROM (SELECT account_id, substr(created_at, 1, 7) AS month, COUNT(*) AS n FROM messages GROUP BY 1, 2) e
       LEFT JOIN monthly_usage u ON u.account_id = e.account_id AND u.month = e.month
       WHERE coalesce(u.n, 0) < e.n ORDER BY 1, 2`,
    )
    .all() as Array<{ account_id: string; month: string; found: number; expected: number }>;
}

/** Contacts whose conversation is missing, in another account, or behind their newest activity. */
export function conversationDifferences(
  sqlite: Database,
): Array<{ contact_id: string; account_id: string; found_account: string | null; found: string | null; expected: string }> {
  return sqlite
    .query(
      `SELECT e.contact_id, e.account_id, v.account_id AS found_account, v.last_message_at AS found, e.at AS expected
       FROM (${NEWEST_ACTIVITY_SQL}) e LEFT JOIN conversations v ON v.contact_id = e.contact_id
       WHERE v.contact_id IS NULL OR v.account_id <> e.account_id OR v.last_message_at < e.at ORDER BY 1`,
    )
    .all() as Array<{ contact_id: string; account_id: string; found_account: string | null; found: string | null; expected: string }>;
}

/** contact_tags rows extra ('found') or missing ('expected') against the contacts' tags. */
export type ContactTagDifference = Pick<RawRow<typeof contactTags>, "account_id" | "tag" | "contact_rowid" | "status"> & { side: "found" | "expected" };

export function contactTagDifferences(sqlite: Database): ContactTagDifference[] {
  return sqlite
    .query(
      `SELECT account_id, tag, contact_rowid, status, 'found' AS side FROM (SELECT account_id, tag, contact_rowid, status FROM contact_tags EXCEPT ${CONTACT_TAGS_EXPECTED})
       UNION ALL
       SELECT account_id, tag, contact_rowid, status, 'expected' AS side FROM (${CONTACT_TAGS_EXPECTED} EXCEPT SELECT account_id, tag, contact_rowid, status FROM contact_tags)
       ORDER BY 1, 3, 2, 5`,
    )
    .all() as ContactTagDifference[];
}

export function countMessagesAndContacts(sqlite: Database): { messages: number; contacts: number } {
  return {
    messages: (sqlite.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number }).n,
    contacts: (sqlite.query("SELECT COUNT(*) AS n FROM contacts").get() as { n: number }).n,
  };
}

/** The rebuild of every derived structure but the intake, in order, each step named for the progress lines. */
export function derivedRebuildSteps(): Array<{ label: string; run: (sqlite: Database) => void }> {
  return [
    { label: "message_rollups: cleared", run: (sqlite) => sqlite.run("DELETE FROM message_rollups") },
    ...rollupRebuildSteps("message_rollups").map((s) => ({ label: `message_rollups: ${s.label}`, run: (sqlite: Database) => void sqlite.run(s.sql) })),
    {
      label: "message_counts",
      run: (sqlite) => {
        sqlite.run("DELETE FROM message_counts");
        sqlite.run(
          "INSERT INTO message_counts (account_id, status, priority_rank, n) SELECT account_id, status, priority_rank, COUNT(*) FROM messages GROUP BY 1, 2, 3",
        );
      },
    },
    {
      label: "monthly_usage (raised where below the messages present)",
      run: (sqlite) =>
        sqlite.run(
          `INSERT INTO monthly_usage (account_id, month, n)
             SELECT account_id, substr(created_at, 1, 7), COUNT(*) FROM messages GROUP BY 1, 2
           ON CONFLICT (account_id, month) DO UPDATE SET n = max(n, excluded.n)`,
        ),
    },
    {
      label: "contacts_fts",
      run: (sqlite) => {
        sqlite.run("INSERT INTO contacts_fts (contacts_fts) VALUES ('rebuild')");
        sqlite.run("DELETE FROM contacts_fts_pending");
      },
    },
    {
      label: "contact_tags",
      run: (sqlite) => {
        sqlite.run("DELETE FROM contact_tags");
        sqlite.run(`INSERT OR IGNORE INTO contact_tags (account_id, tag, contact_rowid, status) ${CONTACT_TAGS_EXPECTED}`);
      },
    },
    {
      label: "conversations (raised where behind the messages present)",
      run: (sqlite) =>
        sqlite.run(
          `INSERT INTO conversations (contact_id, account_id, last_message_at, unread_count)
             SELECT contact_id, account_id, at, 0 FROM (${NEWEST_ACTIVITY_SQL}) WHERE true
           ON CONFLICT (contact_id) DO UPDATE SET account_id = excluded.account_id, last_message_at = max(last_message_at, excluded.last_message_at)`,
        ),
    },
  ];
}

/** The stored entry of an intake row (parsed), or null when it is gone. */
export function findIntakeEntry<E>(sqlite: Database, seq: number): E | null {
  const row = sqlite.query("SELECT entry FROM submission_intake WHERE seq = ?").get(seq) as { entry: string } | null;
  return row ? (JSON.parse(row.entry) as E) : null;
}

export function removeIntakeEntry(sqlite: Database, seq: number): void {
  sqlite.query("DELETE FROM submission_intake WHERE seq = ?").run(seq);
}

/** Runs `fn` inside a savepoint: rolled back to it (and rethrown) when `fn` throws. */
export function inSavepoint<T>(sqlite: Database, name: string, fn: () => T): T {
  sqlite.run(`SAVEPOINT ${name}`);
  try {
    const out = fn();
    sqlite.run(`RELEASE ${name}`);
    return out;
  } catch (err) {
    sqlite.run(`ROLLBACK TO ${name}`);
    sqlite.run(`RELEASE ${name}`);
    throw err;
  }
}
