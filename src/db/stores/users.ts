/**
 * Storage of the people of an account and their invitations (migration 0027). Plain functions
 * over the connection (docs/api-decisions.md, "People, roles and the first run").
 */
import type { Database } from "bun:sqlite";
import type { invitations, users } from "../schema";
import type { Role } from "../../domain/people";

/** A person as sign-in and roles read them (their notification choices: stores/team-notices.ts). */
export type UserRow = Omit<typeof users.$inferSelect, "phoneNumber" | "notifySubmissions" | "notifyReplies" | "notifyEmail" | "quietStart" | "quietEnd">;
export type InvitationRow = typeof invitations.$inferSelect;

const USER_COLUMNS = `id, account_id AS accountId, email, name, password_hash AS passwordHash, role, created_at AS createdAt, updated_at AS updatedAt`;

export function insertUser(sqlite: Database, r: UserRow): void {
  sqlite
    .query(`INSERT INTO users (id, account_id, email, name, password_hash, role, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`)
    .run(r.id, r.accountId, r.email, r.name, r.passwordHash, r.role, r.createdAt, r.updatedAt);
}

export function findUserByEmail(sqlite: Database, email: string): UserRow | null {
  return sqlite.query(`SELECT ${USER_COLUMNS} FROM users WHERE email = ?1`).get(email) as UserRow | null;
}

export function findUserById(sqlite: Database, id: string): UserRow | null {
  return sqlite.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?1`).get(id) as UserRow | null;
}

/** The account's people, owners first, then by name. */
export function listUsers(sqlite: Database, accountId: string | null): UserRow[] {
  const order = "ORDER BY CASE role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 WHEN 'staff' THEN 2 ELSE 3 END, name, id";
  if (accountId === null) return sqlite.query(`SELECT ${USER_COLUMNS} FROM users ${order}`).all() as UserRow[];
  return sqlite.query(`SELECT ${USER_COLUMNS} FROM users WHERE account_id = ?1 ${order}`).all(accountId) as UserRow[];
}

export function countUsers(sqlite: Database, accountId?: string): number {
  if (accountId === undefined) return (sqlite.query("SELECT count(*) AS n FROM users").get() as { n: number }).n;
  return (sqlite.query("SELECT count(*) AS n FROM users WHERE account_id = ?1").get(accountId) as { n: number }).n;
}

export function countOwners(sqlite: Database, accountId: string): number {
  return (sqlite.query("SELECT count(*) AS n FROM users WHERE account_id = ?1 AND role = 'owner'").get(accountId) as { n: number }).n;
}

export function updateUserRole(sqlite: Database, id: string, role: Role, nowIso: string): void {
  sqlite.query("UPDATE users SET role = ?2, updated_at = ?3 WHERE id = ?1").run(id, role, nowIso);
}

export function updateUserPassword(sqlite: Database, id: string, passwordHash: string, nowIso: string): void {
  sqlite.query("UPDATE users SET password_hash = ?2, updated_at = ?3 WHERE id = ?1").run(id, passwordHash, nowIso);
}

/** Deletes a person; their sessions go with them (foreign key cascade). */
export function deleteUser(sqlite: Database, accountId: string, id: string): boolean {
  return sqlite.query("DELETE FROM users WHERE id = ?1 AND account_id = ?2").run(id, accountId).changes > 0;
}

/** Ends every session of a person, or all but one (`exceptSessionId`). */
export function deleteUserSessions(sqlite: Database, userId: string, exceptSessionId: string | null = null): number {
  return sqlite.query("DELETE FROM sessions WHERE user_id = ?1 AND id IS NOT ?2").run(userId, exceptSessionId).changes;
}

/** The server's first account (the installer's): its owners are the server's operators. */
export function firstAccountId(sqlite: Database): string | null {
  const r = sqlite.query("SELECT id FROM accounts ORDER BY created_at, rowid LIMIT 1").get() as { id: string } | null;
  return r?.id ?? null;
}

export function insertInvitation(sqlite: Database, r: InvitationRow): void {
  sqlite
    .query(`INSERT INTO invitations (id, account_id, token_hash, role, created_by, created_at, expires_at, used_at, email) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`)
    .run(r.id, r.accountId, r.tokenHash, r.role, r.createdBy, r.createdAt, r.expiresAt, r.usedAt, r.email);
}

export function findInvitationByHash(sqlite: Database, tokenHash: string): InvitationRow | null {
  return sqlite
    .query(`SELECT id, account_id AS accountId, token_hash AS tokenHash, role, created_by AS createdBy, created_at AS createdAt, expires_at AS expiresAt, used_at AS usedAt,
                   email
            FROM invitations WHERE token_hash = ?1`)
    .get(tokenHash) as InvitationRow | null;
}

/** Marks an invitation used; false when it already was (single use, even under a race). */
export function useInvitation(sqlite: Database, id: string, nowIso: string): boolean {
  return sqlite.query("UPDATE invitations SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL").run(id, nowIso).changes > 0;
}
