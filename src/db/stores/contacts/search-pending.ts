/**
 * Contacts not in the search index yet (migration 0023; docs/api-decisions.md, "The search index
 * written once, off the write path (migration 0023)"): a new contact's rowid is
 * appended to contacts_fts_pending by a trigger, and its text is indexed later, off the write path,
 * by the intake applier Worker (the only writer of derived data) in chunks of INDEX_CHUNK_ROWS —
 * one multi-row INSERT into contacts_fts and one DELETE of the pending rows per transaction.
 * Searches read the pending rows too (services/contacts.ts), so they are exact at every moment.
 *
 * No drizzle: the Worker imports this.
 */
import type { Database, Statement } from "bun:sqlite";

/**
 * Pending rows indexed per transaction. ~140 trigrams per contact, ~12 µs each in a multi-row
 * insert on a quiet machine: a chunk holds the write lock a few ms, except when FTS5 merges its
 * segments at the commit (the slowest chunk, 30-120 ms at load 5, whatever the chunk's size).
 * Smaller chunks cost more per contact (64 / 128 / 256 at load 5: ~70-100 / 40-65 / 50-60 µs),
 * and more disk: FTS5 writes a segment per transaction and merges segments as they pile up, so
 * WAL frames per indexed contact on the bench shop were 0.86 / 0.35 / 0.21 / 0.14 for chunks of
 * 25 / 128 / 256 / 512 (docs/api-decisions.md, "Disk bytes, round two").
 */
export const INDEX_CHUNK_ROWS = 512;

/**
 * The longest a new contact waits for the search index (ms), unless a whole chunk
 * (INDEX_CHUNK_ROWS) waits first: 5 minutes, so that at a quiet shop's rate the contacts of many
 * submissions share one chunk (the index's cost per contact falls with the chunk's size), and the
 * pages it writes share the checkpoint that follows (CHECKPOINT_IDLE_MS, docs/api-decisions.md,
 * "Disk bytes, round four"). Searches read pending contacts directly, so a new contact is found
 * at once all the same; the wait costs a search at most one chunk's rows.
 */
export const SEARCH_INDEX_WAIT_MS = 300_000;

/** Whether the applier indexes a chunk now: `waiting` contacts pending, the oldest for `waitedMs`. */
export function chunkDue(waiting: number, waitedMs: number): boolean {
  return waiting > 0 && (waiting >= INDEX_CHUNK_ROWS || waitedMs >= SEARCH_INDEX_WAIT_MS);
}

export class PendingSearchIndex {
  private readonly anyPending: Statement<{ contact_rowid: number }, []>;
  private readonly chunkEnd: Statement<{ hi: number | null }, [number]>;
  private readonly index: Statement<unknown, [number]>;
  private readonly clear: Statement<unknown, [number]>;
  private readonly count: Statement<{ n: number }, []>;
  private readonly countUpTo: Statement<{ n: number }, [number]>;
  private readonly version: Statement<{ data_version: number }, []>;

  constructor(private readonly sqlite: Database) {
    this.anyPending = sqlite.prepare("SELECT contact_rowid FROM contacts_fts_pending LIMIT 1");
    this.chunkEnd = sqlite.prepare("SELECT max(contact_rowid) AS hi FROM (SELECT contact_rowid FROM contacts_fts_pending ORDER BY contact_rowid LIMIT ?)");
    // CROSS JOIN: the pending rows drive (the planner, knowing contacts' size from ANALYZE and not
    // this table's, otherwise scans every contact and probes the pending rows: ~100 ms a chunk).
    this.index = sqlite.prepare(
      `INSERT INTO contacts_fts (rowid, search_text, custom_fields)
         SELECT c.rowid, c.search_text, c.custom_fields FROM contacts_fts_pending p CROSS JOIN contacts c ON c.rowid = p.contact_rowid
         WHERE p.contact_rowid <= ? ORDER BY p.contact_rowid`,
    );
    this.clear = sqlite.prepare("DELETE FROM contacts_fts_pending WHERE contact_rowid <= ?");
    this.count = sqlite.prepare("SELECT COUNT(*) AS n FROM contacts_fts_pending");
    this.countUpTo = sqlite.prepare("SELECT COUNT(*) AS n FROM (SELECT 1 FROM contacts_fts_pending LIMIT ?)");
    this.version = sqlite.prepare("PRAGMA data_version");
  }

  /** Whether any contact waits to be indexed (a read outside any transaction: no write lock). */
  hasPending(): boolean {
    return this.anyPending.get() !== null;
  }

  /** Moves when another connection commits (SQLite's data_version): the indexer waits for quiet. */
  dataVersion(): number {
    return this.version.get()!.data_version;
  }

  pendingCount(): number {
    return this.count.get()!.n;
  }

  /** The same, counted up to `max`: a bounded read however many contacts an import left waiting. */
  pendingUpTo(max: number): number {
    return this.countUpTo.get(max)!.n;
  }

  /**
   * Indexes up to `max` of the oldest pending contacts in one IMMEDIATE transaction and returns
   * how many left the pending table (0: none was pending).
   */
  indexChunk(max = INDEX_CHUNK_ROWS): number {
    this.sqlite.run("BEGIN IMMEDIATE");
    try {
      const n = this.indexChunkInTransaction(max);
      this.sqlite.run("COMMIT");
      return n;
    } catch (err) {
      if (this.sqlite.inTransaction) this.sqlite.run("ROLLBACK");
      throw err;
    }
  }

  /** The same inside the caller's transaction (doctor's check indexes every pending row in a savepoint). */
  indexChunkInTransaction(max: number): number {
    const hi = this.chunkEnd.get(max)?.hi ?? null;
    if (hi === null) return 0;
    this.index.run(hi);
    return this.clear.run(hi).changes;
  }
}

/**
 * `textwire doctor --check` of the search index: a pending row whose contact is gone, and FTS5's
 * integrity check, which compares the index with every contact — so the pending contacts are
 * indexed first, in a transaction rolled back afterwards. The integrity check is itself an INSERT
 * (a write): the transaction is IMMEDIATE from the start (a deferred one that read first cannot
 * start writing after another connection's commit), so the server's writers wait for the check.
 */
export function searchIndexDifferences(sqlite: Database): string[] {
  const found: string[] = [];
  sqlite.run("BEGIN IMMEDIATE");
  try {
    const extra = sqlite
      .query("SELECT contact_rowid FROM contacts_fts_pending WHERE contact_rowid NOT IN (SELECT rowid FROM contacts) ORDER BY 1")
      .values() as number[][];
    for (const [rowid] of extra) found.push(`extra pending row: no contact at rowid ${rowid}`);
    new PendingSearchIndex(sqlite).indexChunkInTransaction(Number.MAX_SAFE_INTEGER);
    try {
      sqlite.run("INSERT INTO contacts_fts (contacts_fts, rank) VALUES ('integrity-check', 1)");
    } catch (err) {
      found.push(`the search index does not match the contacts (${(err as Error).message})`);
    }
    return found;
  } finally {
    sqlite.run("ROLLBACK");
  }
}
