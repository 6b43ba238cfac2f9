/**
 * Storage of dashboard sessions. Plain functions over the connection; `sqlite.query` caches each
 * statement, so the per-request lookup is prepared once.
 */
import type { Database } from "bun:sqlite";
import type { sessions } from "../schema";
import type { Permission } from "../../domain/permissions";
import type { Role } from "../../domain/people";

export type SessionRow = typeof sessions.$inferSelect;

/** A session with what it acts as: its key's permission, or its person (the permission is then null). */
export type LiveSessionRow = SessionRow & {
  permission: Permission | null;
  userName: string | null;
  userEmail: string | null;
  userRole: Role | null;
};

const COLUMNS = `s.id, s.account_id AS accountId, s.key_id AS keyId, s.user_id AS userId, s.token_hash AS tokenHash, s.csrf_token AS csrfToken,
  s.created_at AS createdAt, s.last_seen_at AS lastSeenAt, s.expires_at AS expiresAt, s.ip_address AS ipAddress, s.user_agent AS userAgent`;

export function insertSession(sqlite: Database, r: SessionRow): void {
  sqlite
    .query(
      `INSERT INTO sessions (id, account_id, key_id, user_id, token_hash, csrf_token, created_at, last_seen_at, expires_at, ip_address, user_agent)
       VALUES (?1, ?2, ?3, ?11, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
    )
    .run(r.id, r.accountId, r.keyId, r.tokenHash, r.csrfToken, r.createdAt, r.lastSeenAt, r.expiresAt, r.ipAddress, r.userAgent, r.userId);
}

/** A key's session needs a live key; a person's session needs the person (deleting one ends it). */
const LIVE_FROM = `FROM sessions s LEFT JOIN api_keys k ON k.id = s.key_id LEFT JOIN users u ON u.id = s.user_id`;
const LIVE_WHERE = `((s.key_id IS NOT NULL AND k.revoked_at IS NULL AND k.id IS NOT NULL) OR (s.user_id IS NOT NULL AND u.id IS NOT NULL))`;
const LIVE_COLUMNS = `k.permission, u.name AS userName, u.email AS userEmail, u.role AS userRole`;

/**
 * The live session for a token hash with its key's permission: none once it has expired or its
 * key has been revoked (so revoking a key — from the CLI or anywhere — ends its sessions at once).
 */
export function findLiveSessionByTokenHash(sqlite: Database, tokenHash: string, nowIso: string): LiveSessionRow | null {
  return sqlite
    .query(`SELECT ${COLUMNS}, ${LIVE_COLUMNS} ${LIVE_FROM} WHERE s.token_hash = ?1 AND s.expires_at > ?2 AND ${LIVE_WHERE}`)
    .get(tokenHash, nowIso) as LiveSessionRow | null;
}

export function touchSession(sqlite: Database, id: string, lastSeenAt: string, expiresAt: string): void {
  sqlite.query("UPDATE sessions SET last_seen_at = ?2, expires_at = ?3 WHERE id = ?1").run(id, lastSeenAt, expiresAt);
}

/** The account's live sessions, newest first, with each key's permission and last 4 characters, or the person. */
export function listLiveSessions(sqlite: Database, accountId: string, nowIso: string): Array<LiveSessionRow & { keyLast4: string | null }> {
  return sqlite
    .query(
      `SELECT ${COLUMNS}, ${LIVE_COLUMNS}, k.last4 AS keyLast4 ${LIVE_FROM}
       WHERE s.account_id = ?1 AND s.expires_at > ?2 AND ${LIVE_WHERE} ORDER BY s.created_at DESC, s.id DESC`,
    )
    .all(accountId, nowIso) as Array<LiveSessionRow & { keyLast4: string | null }>;
}

/** Returns whether a session of this account was deleted. */
export function deleteSession(sqlite: Database, accountId: string, id: string): boolean {
  return sqlite.query("DELETE FROM sessions WHERE id = ?1 AND account_id = ?2").run(id, accountId).changes > 0;
}

/** Sessions that can never be used again (expired, or their key revoked). */
export function deleteDeadSessions(sqlite: Database, nowIso: string): number {
  return sqlite
    .query("DELETE FROM sessions WHERE expires_at <= ?1 OR key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL)")
    .run(nowIso).changes;
}

/** Whether the person holds a live session opened from this address (their own phone or computer). */
export function hasLiveSessionFrom(sqlite: Database, userId: string, ipAddress: string, nowIso: string): boolean {
  return sqlite.query("SELECT 1 FROM sessions WHERE user_id = ?1 AND ip_address = ?2 AND expires_at > ?3 LIMIT 1").get(userId, ipAddress, nowIso) !== null;
}
