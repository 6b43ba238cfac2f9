/**
 * A message's lease history, kept small inside its `metadata` (no table of its own): the detail
 * view's timeline (GET /v1/messages/{id}) needs each lease's phone and expiry, which the lease
 * columns forget when the lease ends. `metadata.leases` holds the latest LEASE_HISTORY_MAX leases
 * `{at, deviceId, expiresAt, expired?}`; `metadata.failures` (retries.ts) holds the failed
 * attempts, an owner's retry included (`by: "owner"`). SQL fragments for the statements that
 * already write the row, so recording costs no extra write.
 */
import type { Database } from "bun:sqlite";

/** Leases kept per message; older ones are dropped (a message that bounced between phones). */
export const LEASE_HISTORY_MAX = 10;
/** Failed attempts kept per message (automatic retries stop at maxAttempts ≤ 10; owner retries add more). */
export const FAILURE_HISTORY_MAX = 20;

/** Guards every edit: a row whose metadata is not JSON keeps it as it is instead of failing the write. */
const ifJson = (expr: string) => `CASE WHEN json_valid(metadata) THEN ${expr} ELSE metadata END`;

/** `metadata` with one value set at a JSON path (both SQL expressions or placeholders). */
export function setMetadataSql(path: string, value: string): string {
  return ifJson(`json_set(metadata, ${path}, ${value})`);
}

/**
 * `metadata` with one lease appended (the oldest dropped beyond LEASE_HISTORY_MAX). The arguments
 * are SQL placeholders or expressions for the lease's start, holder and expiry.
 */
export function appendLeaseSql(at: string, deviceId: string, expiresAt: string): string {
  return ifJson(`json_insert(
    CASE WHEN json_type(metadata, '$.leases') = 'array'
      THEN CASE WHEN json_array_length(metadata, '$.leases') >= ${LEASE_HISTORY_MAX} THEN json_remove(metadata, '$.leases[0]') ELSE metadata END
      ELSE json_set(metadata, '$.leases', json('[]')) END,
    '$.leases[#]', json_object('at', ${at}, 'deviceId', ${deviceId}, 'expiresAt', ${expiresAt}))`);
}

/** `metadata` with the latest lease marked as ended with no report from its phone. */
export const MARK_LEASE_EXPIRED_SQL = ifJson(
  `CASE WHEN json_type(metadata, '$.leases[#-1]') = 'object' THEN json_set(metadata, '$.leases[#-1].expired', json('true')) ELSE metadata END`,
);

/** `metadata` with the latest lease's expiry moved (the phone said it has the message in hand). */
export function extendLeaseSql(expiresAt: string): string {
  return ifJson(`CASE WHEN json_type(metadata, '$.leases[#-1]') = 'object' THEN json_set(metadata, '$.leases[#-1].expiresAt', ${expiresAt}) ELSE metadata END`);
}

/**
 * The owner sent a failed message again: its final failure goes into `metadata.failures` (as an
 * automatic retry's does), so the timeline still shows it once failure_reason is cleared.
 */
export function recordOwnerRetry(sqlite: Database, id: string, f: { failedAt: string; reason: string | null; retryAt: string }): void {
  sqlite
    .query(
      `UPDATE messages SET metadata = ${ifJson(`json_insert(
         CASE WHEN json_type(metadata, '$.failures') = 'array'
           THEN CASE WHEN json_array_length(metadata, '$.failures') >= ${FAILURE_HISTORY_MAX} THEN json_remove(metadata, '$.failures[0]') ELSE metadata END
           ELSE json_set(metadata, '$.failures', json('[]')) END,
         '$.failures[#]', json_object('at', ?2, 'reason', ?3, 'retryAt', ?4, 'by', 'owner'))`)}
       WHERE id = ?1`,
    )
    .run(id, f.failedAt, f.reason ?? "", f.retryAt);
}

/**
 * Names of the account's registered phones among lease holders: an SMSGate phone holds by its
 * id, a recipe phone by its X-Device-Id (external id); any other holder is a free-text deviceId.
 */
export function deviceNames(sqlite: Database, accountId: string, ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const st = sqlite.query("SELECT name FROM devices WHERE account_id = ?2 AND (id = ?1 OR (kind = 'recipe' AND external_id = ?1)) LIMIT 1");
  for (const id of new Set(ids)) {
    const r = st.get(id, accountId) as { name: string } | null;
    if (r) out.set(id, r.name);
  }
  return out;
}

/**
 * The latest lease recorded in a message's metadata (the last `leases` entry): who it was given
 * to and when, or null when none is recorded or the metadata is not JSON.
 */
export function latestLease(metadata: string | null): { at: string; deviceId: string | null } | null {
  let leases: unknown;
  try {
    leases = (JSON.parse(metadata || "{}") as { leases?: unknown })?.leases;
  } catch {
    return null;
  }
  if (!Array.isArray(leases) || leases.length === 0) return null;
  const l = leases[leases.length - 1] as { at?: unknown; deviceId?: unknown } | null;
  if (!l || typeof l !== "object" || typeof l.at !== "string") return null;
  return { at: l.at, deviceId: typeof l.deviceId === "string" ? l.deviceId : null };
}

/**
 * The SIM the latest lease was given with (0: the phone's own choice) and, when the text went to
 * another phone or SIM than its contact's own, why (GET /v1/messages/{id}'s timeline). Written in
 * the lease's transaction, on the row the lease just wrote.
 */
export function noteLeaseSender(sqlite: Database, id: string, slot: number, moved: string | null): void {
  sqlite
    .query(
      `UPDATE messages SET metadata = ${ifJson(
        `CASE WHEN json_type(metadata, '$.leases[#-1]') = 'object'
           THEN json_set(metadata, '$.leases[#-1].sim', ?2${moved === null ? "" : ", '$.leases[#-1].moved', ?3"}) ELSE metadata END`,
      )} WHERE id = ?1`,
    )
    .run(id, slot, ...(moved === null ? [] : [moved]));
}

/** Ids of the still-queued messages `holder` holds a lease on, given with SIM `slot`. */
export function leasedOnSlot(sqlite: Database, holder: string, slot: number): string[] {
  return (
    sqlite
      .query(
        `SELECT id FROM messages WHERE lease_device_id = ?1 AND status = 'queued' AND lease_expires_at IS NOT NULL AND lease_token IS NOT NULL
           AND coalesce(json_extract(metadata, '$.leases[#-1].sim'), 0) = ?2`,
      )
      .all(holder, slot) as Array<{ id: string }>
  ).map((r) => r.id);
}

/** The SIM slot the latest lease was given with (0: the phone's own choice, or unknown). */
export function latestLeaseSim(metadata: string | null): number {
  try {
    const leases = (JSON.parse(metadata || "{}") as { leases?: unknown })?.leases;
    if (!Array.isArray(leases) || leases.length === 0) return 0;
    const sim = (leases[leases.length - 1] as { sim?: unknown } | null)?.sim;
    return typeof sim === "number" && Number.isInteger(sim) ? sim : 0;
  } catch {
    return 0;
  }
}
