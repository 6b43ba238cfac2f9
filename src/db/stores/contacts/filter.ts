/**
 * The SQL of a contact filter (status, form, dates, search, tags, custom fields), scoped to an
 * account: used by the contact list, exports, conversations and broadcast audiences.
 */
import type { SQLQueryBindings } from "bun:sqlite";
import { ftsMatch } from "../../../domain/contact-fts";
import type { ContactFilter } from "../../../domain/contact-query";

/** The rowids of the account's contacts having one tag, in rowid order (contact_tags' key). */
export const TAG_ROWIDS = "SELECT contact_rowid FROM contact_tags WHERE account_id = ? AND tag = ?";
/** The same, of contacts with one status: one range of contact_tags_status_idx (migration 0025). */
export const TAG_STATUS_ROWIDS = `${TAG_ROWIDS} AND status = ?`;

/**
 * Rows of contacts_fts matching a MATCH expression (a pre-filter; see contact-fts.ts), plus every
 * contact not indexed yet (contacts_fts_pending, migration 0023): the exact test that always
 * follows decides for those, so a search is exact while the applier has not indexed them.
 */
const FTS_ROWIDS = "c.rowid IN (SELECT rowid FROM contacts_fts WHERE contacts_fts MATCH ? UNION ALL SELECT contact_rowid FROM contacts_fts_pending)";

/**
 * WHERE clause of a contact filter, scoped to the account.
 *
 * Tags go through contact_tags, keyed (account_id, tag, contact_rowid) (migration 0020): with
 * `tagMode: "in"` the first tag (pass the rarest first) is a list of rowids read from that key and
 * every further tag a seek — cheap when the tag is rare; with `"exists"` every tag is a seek, so a
 * page can be read straight off a sort index and stop after `limit` hits — cheap when the tags
 * are common; with `"intersect"` the tags' rowid lists are merged in rowid order (no seek per
 * tagged contact) — the cheapest way to find every contact having several common tags, e.g. to
 * count them; with `"member"` the tags' rowids (merged as for "intersect") become a set, looked up
 * per entry of the index the other conditions read — a status filter is then counted from the
 * status index and contact_tags alone, where "in" and "intersect" read a contact row per tagged
 * contact. With a status, the lists of "in", "intersect" and "member" hold only the contacts
 * with that status (contact_tags carries each contact's status).
 *
 * Custom fields match exactly through json_extract; `instr` on the stored JSON text first skips
 * rows that cannot match without parsing them (values are always written with JSON.stringify, so
 * a stored value appears in the text exactly as JSON.stringify(value)).
 *
 * Text and custom-field values of 3+ characters first read the FTS5 trigram index (contacts_fts,
 * see contact-fts.ts) unless `useIndex` is false; the exact tests above always stay.
 */
export function filterSql(
  accountId: string,
  f: ContactFilter,
  tagMode: TagMode = "in",
  useIndex = true,
): { where: string; params: SQLQueryBindings[] } {
  const conds = ["c.account_id = ?"];
  const params: SQLQueryBindings[] = [accountId];
  if (f.status) conds.push("c.status = ?"), params.push(f.status);
  if (f.formId) conds.push("c.form_id = ?"), params.push(f.formId);
  if (f.createdAfter) conds.push("c.created_at >= ?"), params.push(f.createdAfter);
  if (f.createdBefore) conds.push("c.created_at < ?"), params.push(f.createdBefore);
  if (f.optedOut !== undefined) conds.push("c.opted_out = ?"), params.push(f.optedOut ? 1 : 0);
  // search_text is lower-cased and so is the pattern: a plain substring test (instr) is exact
  // and cheaper than LIKE.
  // A digits-only search is a phone search (E.164 holds the number's digits in one run). 3+
  // digits read the trigram index first — search_text holds the phone's digits, so it finds every
  // match, and the exact test on the phone drops digits found only in a name or e-mail; measured
  // never slower than the scan and 10-100x faster when few numbers match. Shorter ones scan the
  // (account_id, phone_number) index, not the table.
  if (f.search && /^\d+$/.test(f.search)) {
    const match = useIndex ? ftsMatch("search_text", f.search) : null;
    if (match) conds.push(FTS_ROWIDS, "instr(c.phone_number, ?) > 0"), params.push(match, f.search);
    else conds.push("c.rowid IN (SELECT rowid FROM contacts WHERE account_id = ? AND instr(phone_number, ?) > 0)"), params.push(accountId, f.search);
  } else if (f.search) {
    // Terms of 3+ characters read the trigram index first (contact-fts.ts); the exact test stays.
    const match = useIndex ? ftsMatch("search_text", f.search) : null;
    if (match) conds.push(FTS_ROWIDS), params.push(match);
    conds.push("instr(c.search_text, ?) > 0"), params.push(f.search);
  }
  const tags = f.tags ?? [];
  const list = f.status ? TAG_STATUS_ROWIDS : TAG_ROWIDS;
  const listParams = (tag: string) => (f.status ? [accountId, tag, f.status] : [accountId, tag]);
  if (tagMode === "member") {
    // The tagged contacts' rowids are a set looked up per entry of whichever index the other
    // conditions pick; `+` keeps the set from driving.
    conds.push(`+c.rowid IN (${tags.map(() => list).join(" INTERSECT ")})`);
    for (const tag of tags) params.push(...listParams(tag));
  } else if (tagMode === "intersect" && tags.length > 1) {
    conds.push(`c.rowid IN (${tags.map(() => list).join(" INTERSECT ")})`);
    for (const tag of tags) params.push(...listParams(tag));
  } else tags.forEach((tag, i) => {
    if (i === 0 && tagMode !== "exists") {
      conds.push(`c.rowid IN (${list})`);
      params.push(...listParams(tag));
    } else {
      conds.push("EXISTS (SELECT 1 FROM contact_tags t WHERE t.account_id = ? AND t.tag = ? AND t.contact_rowid = c.rowid)");
      params.push(accountId, tag);
    }
  });
  for (const [k, v] of Object.entries(f.customFields ?? {})) {
    const match = useIndex ? ftsMatch("custom_fields", JSON.stringify(v)) : null;
    if (match) conds.push(FTS_ROWIDS), params.push(match);
    conds.push("instr(c.custom_fields, ?) > 0 AND json_extract(c.custom_fields, ?) = ?");
    params.push(JSON.stringify(v), `$."${k}"`, v);
  }
  return { where: conds.join(" AND "), params };
}

export type TagMode = "in" | "exists" | "intersect" | "member";
