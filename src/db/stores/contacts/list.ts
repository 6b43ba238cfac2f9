/**
 * Planning a page of the contact list: which index drives it, how the total is counted, and a
 * cache of totals and matching rowids between requests. All of it is SQL built from the filter
 * (filter.ts), so it lives with the store; ContactService.list answers with it.
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import type { ContactFilter, ContactListQuery } from "../../../domain/contact-query";
import type { contacts } from "../../schema/contacts";
import { filterSql, TAG_ROWIDS, TAG_STATUS_ROWIDS, type TagMode } from "./filter";

/** A row of the list: the columns the dashboard's table shows. */
export type ContactListItem = Pick<
  typeof contacts.$inferSelect,
  "id" | "firstName" | "lastName" | "phoneNumber" | "email" | "status" | "formId" | "messageCount" | "optedOut" | "createdAt" | "updatedAt"
> & {
  /** The form's name (null: no form, or it was deleted). */
  formName: string | null;
  tags: string[];
};
/** What SQLite returns for a list row: tags as JSON text, the boolean as 0/1. */
type ContactListRead = Omit<ContactListItem, "tags" | "optedOut"> & { tags: string; optedOut: number };

/** CSV text parsed and written per transaction; the event loop gets a turn between slices. */
/**
 * Whether a filter holds nothing but tags and perhaps a status (its total can then be counted in
 * contact_tags alone, which carries each contact's status).
 */
function onlyTags(f: ContactFilter): boolean {
  return !f.formId && !f.createdAfter && !f.createdBefore && !f.search && !f.customFields && f.optedOut === undefined && !!f.tags?.length;
}

/** A tag held by at least this share of the account's contacts is "common" (see filterSql). */
const COMMON_TAG_SHARE = 0.01;
/**
 * A tag on at least this many contacts is common whatever the account's size (below 500,000
 * contacts the share says the same): its contacts are counted no further than this, and the
 * account's contacts are not counted at all. The choice only picks a plan; answers are the same.
 */
const COMMON_TAG_MIN = 5_000;
/**
 * Common tags with a status are paged by probing the tags per entry of the status index while the
 * page ends within the first 1/MEMBER_PAGE_SHARE of the matches (a dense match stops early),
 * beyond that from the tags' status ranges as a set (see list()).
 */
const MEMBER_PAGE_SHARE = 10;
const CACHE_MAX_ENTRIES = 500;
/** Longest list of matching rowids kept between requests (8 bytes each). */
const CACHE_MAX_IDS = 20_000;

const SORT_COLUMNS: Record<ContactListQuery["sortBy"], string> = {
  createdAt: "c.created_at",
  updatedAt: "c.updated_at",
  firstName: "c.first_name",
  lastName: "c.last_name",
};

export class ContactLists {
  private readonly version: Statement;
  private readonly dataVersion: Statement;

  constructor(private readonly sqlite: Database) {
    this.version = sqlite.query(`SELECT total_changes() AS c`);
    this.dataVersion = sqlite.query(`PRAGMA data_version`);
  }

  /**
   * Totals (and, for filters that must read every row, the ordered matching rowids) of recent
   * queries, valid while the database is unchanged: paging through a search scans once. The
   * version is this connection's total_changes() (every write of the process goes through it)
   * plus data_version (writes from any other connection).
   */
  private cache = new Map<string, { total: number; ids?: number[] }>();
  private cacheVersion = "";

  private cached(key: string, compute: () => { total: number; ids?: number[] }): { total: number; ids?: number[] } {
    const v = this.version.get() as { c: number };
    const d = this.dataVersion.get() as { data_version: number };
    const version = `${v.c}:${d.data_version}`;
    if (version !== this.cacheVersion) {
      this.cache.clear();
      this.cacheVersion = version;
    }
    let e = this.cache.get(key);
    if (e === undefined) {
      e = compute();
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      // Long id lists are not kept: such filters match often, so a LIMIT query stops early.
      this.cache.set(key, e.ids && e.ids.length > CACHE_MAX_IDS ? { total: e.total } : e);
    }
    return e;
  }

  private cachedCount(sql: string, params: SQLQueryBindings[]): number {
    return this.cached(sql + "\u0000" + JSON.stringify(params), () => ({ total: (this.sqlite.query(sql).get(...params) as { n: number }).n })).total;
  }

  list(accountId: string, q: ContactListQuery): { contacts: ContactListItem[]; pagination: { total: number; page: number; limit: number; totalPages: number } } {
    const dir = q.order === "asc" ? "ASC" : "DESC";
    const order = `${SORT_COLUMNS[q.sortBy]} ${dir}, c.rowid ${dir}`;
    let f: ContactFilter = q;
    let tagMode: TagMode = "in";
    let total: number | undefined;
    let ids: number[] | undefined;
    if (q.tags?.length) {
      // Rarest tag first; common tags are probed while walking the sort index instead. Tags and
      // the account's contacts are counted only as far as the choice needs (a first request
      // after a start or a write counts them again).
      const counted = q.tags.map((tag) => ({
        tag,
        n: this.cachedCount("SELECT count(*) AS n FROM (SELECT 1 FROM contact_tags WHERE account_id = ? AND tag = ? LIMIT ?)", [accountId, tag, COMMON_TAG_MIN]),
      }));
      counted.sort((a, b) => a.n - b.n);
      f = { ...q, tags: counted.map((c) => c.tag) };
      const rarest = counted[0].n;
      if (rarest === 0) total = 0;
      else if (rarest >= COMMON_TAG_MIN) tagMode = "exists";
      else {
        // Common iff all ≤ rarest / share: count the account's contacts up to one past that.
        const upTo = Math.round(rarest / COMMON_TAG_SHARE) + 1;
        const all = this.cachedCount("SELECT count(*) AS n FROM (SELECT 1 FROM contacts WHERE account_id = ? LIMIT ?)", [accountId, upTo]);
        if (all < upTo) tagMode = "exists";
      }
      if (total === undefined && onlyTags(f)) {
        if (f.status) {
          // Each tag's contacts with the status are one range of contact_tags' status index
          // (migration 0025), in rowid order: merge them (or count the one).
          const lists = counted.map(() => TAG_STATUS_ROWIDS).join(" INTERSECT ");
          total = this.cachedCount(`SELECT count(*) AS n FROM (${lists})`, counted.flatMap((c) => [accountId, c.tag, f.status!]));
        } else if (tagMode === "exists" && counted.length > 1) {
          // Common tags: merge their contact lists (see filterSql's "intersect").
          const lists = counted.map(() => TAG_ROWIDS).join(" INTERSECT ");
          total = this.cachedCount(`SELECT count(*) AS n FROM (${lists})`, counted.flatMap((c) => [accountId, c.tag]));
        } else {
          const rest = counted.slice(1).map(() => " AND EXISTS (SELECT 1 FROM contact_tags t WHERE t.account_id = t0.account_id AND t.tag = ? AND t.contact_rowid = t0.contact_rowid)").join("");
          total = this.cachedCount(`SELECT count(*) AS n FROM contact_tags t0 WHERE t0.account_id = ? AND t0.tag = ?${rest}`, [accountId, ...counted.map((c) => c.tag)]);
        }
      }
    }
    let { where, params } = filterSql(accountId, f, tagMode);
    if (total === undefined && (f.search || f.customFields)) {
      // Text, phone-digit and custom-field filters read every row (or every phone) whatever we
      // do: read them once, in order, keeping the matching rowids — the total and every page
      // come from that one pass.
      const e = this.cached(`ids\u0000${where}\u0000${order}\u0000${JSON.stringify(params)}`, () => {
        const all = (this.sqlite.query(`SELECT c.rowid FROM contacts c WHERE ${where} ORDER BY ${order}`).values(...params) as number[][]).map((r) => r[0]);
        return { total: all.length, ids: all };
      });
      total = e.total;
      ids = e.ids;
      // Too many matches to keep their ids: the filter is common, so a page read off the sort
      // index with the exact tests alone stops after a few rows, where the index pre-filter would
      // read every match again for each page.
      if (!ids) ({ where, params } = filterSql(accountId, f, tagMode, false));
    }
    if (total === undefined) {
      // Several common tags are counted by merging their lists; a rare first tag drives probes;
      // common tags with a status are a set looked up while counting the status index.
      const counting = filterSql(accountId, f, tagMode === "exists" ? (f.status ? "member" : "intersect") : "in");
      total = this.cachedCount(`SELECT count(*) AS n FROM contacts c WHERE ${counting.where}`, counting.params);
    }
    const offset = (q.page - 1) * q.limit;
    if (tagMode === "exists" && f.status && !f.search && !f.customFields && (offset + q.limit) * MEMBER_PAGE_SHARE > total) {
      // Common tags with a status, past the first tenth of the matches: probing the tags per entry
      // of the status index costs ~1.5 µs per entry walked, and a sparse match walks most of the
      // status; the tags' status ranges as a set cost ~0.15 µs per entry once, then ~0.1 per entry
      // walked (100k contacts, 798 matches, page 10: 20–45 → 3–5 ms).
      ({ where, params } = filterSql(accountId, f, "member"));
    }
    let rows: ContactListRead[] = [];
    if (total > 0 && offset < total) {
      const columns = `c.id, c.first_name AS firstName, c.last_name AS lastName, c.phone_number AS phoneNumber, c.email, c.status,
             c.form_id AS formId, f.name AS formName, c.tags, c.message_count AS messageCount, c.opted_out AS optedOut, c.created_at AS createdAt, c.updated_at AS updatedAt`;
      if (ids) {
        const page = ids.slice(offset, offset + q.limit);
        const got = this.sqlite
          .query(`SELECT c.rowid AS rid, ${columns} FROM contacts c LEFT JOIN forms f ON f.id = c.form_id WHERE c.rowid IN (${page.map(() => "?").join(",")})`)
          .all(...page) as Array<ContactListRead & { rid: number }>;
        const byRid = new Map(got.map((r) => [r.rid, r]));
        rows = page.map((rid) => byRid.get(rid)).filter((r) => r !== undefined).map(({ rid: _rid, ...r }) => r);
      } else {
        // Page over rowids first (index only where possible), then read the page's rows: an
        // offset skips index entries, not joined rows.
        rows = this.sqlite
          .query(
            `SELECT ${columns}
             FROM (SELECT c.rowid AS rid FROM contacts c WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?) p
             JOIN contacts c ON c.rowid = p.rid LEFT JOIN forms f ON f.id = c.form_id
             ORDER BY ${order}`,
          )
          .all(...params, q.limit, offset) as ContactListRead[];
      }
    }
    return {
      contacts: rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], optedOut: r.optedOut === 1 })),
      pagination: { total, page: q.page, limit: q.limit, totalPages: Math.ceil(total / q.limit) },
    };
  }
}
