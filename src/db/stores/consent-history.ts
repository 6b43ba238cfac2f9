/**
 * A contact's consent history (consent_history, migration 0032): appended by
 * src/services/opt-outs.ts next to each change of the opt-out it records, read newest first.
 */
import type { Database } from "bun:sqlite";
import type { Actor } from "../../domain/people";
import type { consentHistory } from "../schema/consent-history";

export type ConsentAction = "opted_out" | "opted_in";
/** manual: by hand (dashboard, POST /v1/contacts/<id>/opt-out|opt-in); keyword: a STOP/START text; import; api: optedOut in a contact body. */
export type ConsentSource = "manual" | "keyword" | "import" | "api";

export type ConsentEntry = Pick<typeof consentHistory.$inferSelect, "action" | "source" | "reason" | "at"> & {
  /** Who did it (the stored actor, parsed); null when the customer did (a text) or nobody is known. */
  by: Actor | null;
};

export function appendConsentEntry(sqlite: Database, accountId: string, contactId: string, e: ConsentEntry): void {
  sqlite
    .query("INSERT INTO consent_history (account_id, contact_id, action, source, reason, actor, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
    .run(accountId, contactId, e.action, e.source, e.reason, e.by ? JSON.stringify(e.by) : null, e.at);
}

function parseActor(text: string | null): Actor | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Actor;
    return v && (v.type === "user" || v.type === "key") ? v : null;
  } catch {
    return null;
  }
}

/** A page of the contact's history, newest first, and how many entries it has. */
export function listConsentHistory(sqlite: Database, accountId: string, contactId: string, limit: number, offset: number): { entries: ConsentEntry[]; total: number } {
  const rows = sqlite
    .query("SELECT action, source, reason, actor, at FROM consent_history WHERE contact_id = ?1 AND account_id = ?2 ORDER BY id DESC LIMIT ?3 OFFSET ?4")
    .all(contactId, accountId, limit, offset) as Array<Omit<ConsentEntry, "by"> & { actor: string | null }>;
  const total = (sqlite.query("SELECT count(*) AS n FROM consent_history WHERE contact_id = ?1 AND account_id = ?2").get(contactId, accountId) as { n: number }).n;
  return { entries: rows.map(({ actor, ...r }) => ({ ...r, by: parseActor(actor) })), total };
}
