import type { Database } from "bun:sqlite";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../lib/clock";
import { iso } from "../lib/clock";
import { newId } from "../lib/ids";
import { AppError } from "../errors";
import type { AccountService } from "./accounts";
import type { AuthKey, Permission } from "../domain/permissions";
import { deleteDeadSessions, deleteSession, findLiveSessionByTokenHash, insertSession, listLiveSessions, touchSession, type LiveSessionRow, type SessionRow } from "../db/stores/sessions";
import { isOperatorKey } from "../db/stores/accounts";
import { deleteUserSessions, firstAccountId } from "../db/stores/users";
import { roleKeyPermission, type Person } from "../domain/people";

/** A dashboard session lasts this long after its last use (sliding). */
export const SESSION_TTL_MS = 7 * 24 * 3600_000;
/** A session's expiry is moved (one write) at most this often while it is in use. */
export const SESSION_TOUCH_MS = 60_000;
export const SESSION_COOKIE = "textwire_session";
/** Longest User-Agent kept on a session (shown in the session list). */
const USER_AGENT_MAX = 200;

export interface SessionView {
  id: string;
  accountId: string;
  permission: Permission;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  ipAddress: string | null;
  userAgent: string | null;
  /** The person signed in; null for a session opened with an API key. */
  user: Person | null;
}

export interface LiveSession {
  row: LiveSessionRow;
  auth: AuthKey;
  /** The expiry moved: the cookie is sent again with a fresh Max-Age. */
  refreshed: boolean;
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * Dashboard sign-ins: an API key opens a session; the browser holds only a random token in an
 * HttpOnly cookie, SQLite only its SHA-256. The session acts with its key's permission, and ends
 * when the key is revoked, on sign-out, on revocation from the session list, or 7 days unused.
 */
export class SessionService {
  constructor(private readonly sqlite: Database, private readonly clock: Clock, private readonly accounts: AccountService) {}

  /** Null for a key that is not a live key (the caller answers 401 and counts the failure). */
  signIn(apiKey: string, ipAddress: string | null, userAgent: string | null): { token: string; session: SessionView & { csrfToken: string } } | null {
    const auth = this.accounts.authenticate(apiKey);
    if (!auth) return null;
    return this.open(auth.accountId, { keyId: auth.keyId, permission: auth.permission }, null, ipAddress, userAgent);
  }

  /** Opens a session for a person whose password (or invitation, or setup) was just checked. */
  signInPerson(user: Person & { accountId: string }, ipAddress: string | null, userAgent: string | null): { token: string; session: SessionView & { csrfToken: string } } {
    return this.open(user.accountId, null, user, ipAddress, userAgent);
  }

  /** Ends every session of a person (or all but `exceptSessionId`); returns how many ended. */
  endPersonSessions(userId: string, exceptSessionId: string | null = null): number {
    return deleteUserSessions(this.sqlite, userId, exceptSessionId);
  }

  private open(accountId: string, key: { keyId: string; permission: Permission } | null, user: Person | null, ipAddress: string | null, userAgent: string | null) {
    const now = this.clock();
    deleteDeadSessions(this.sqlite, iso(now));
    const token = randomBytes(32).toString("base64url");
    const row: SessionRow = {
      id: newId(),
      accountId,
      keyId: key?.keyId ?? null,
      userId: user?.id ?? null,
      tokenHash: hashToken(token),
      csrfToken: randomBytes(24).toString("base64url"),
      createdAt: iso(now),
      lastSeenAt: iso(now),
      expiresAt: iso(now + SESSION_TTL_MS),
      ipAddress,
      userAgent: userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
    };
    insertSession(this.sqlite, row);
    const live: LiveSessionRow = { ...row, permission: key?.permission ?? null, userName: user?.name ?? null, userEmail: user?.email ?? null, userRole: user?.role ?? null };
    return { token, session: { ...viewOf(live), csrfToken: row.csrfToken } };
  }

  /** The live session for a cookie's token, its expiry slid forward; null when it has ended. */
  authenticate(token: string): LiveSession | null {
    if (token.length < 20 || token.length > 100) return null;
    const now = this.clock();
    const row = findLiveSessionByTokenHash(this.sqlite, hashToken(token), iso(now));
    if (!row) return null;
    const account = this.accounts.findAccount(row.accountId);
    if (!account) return null;
    const user = personOf(row);
    // A person acts with their role; an owner of the server's first account (the installer's) is
    // also the server's operator (docs/api-decisions.md, "People, roles and the first run").
    const operator = user ? user.role === "owner" && firstAccountId(this.sqlite) === row.accountId : isOperatorKey(this.sqlite, row.keyId!);
    let refreshed = false;
    if (now - Date.parse(row.lastSeenAt) >= SESSION_TOUCH_MS) {
      row.lastSeenAt = iso(now);
      row.expiresAt = iso(now + SESSION_TTL_MS);
      touchSession(this.sqlite, row.id, row.lastSeenAt, row.expiresAt);
      refreshed = true;
    }
    const permission = user ? roleKeyPermission(user.role) : row.permission!;
    return {
      row,
      auth: { keyId: user ? `user:${user.id}` : row.keyId!, accountId: row.accountId, permission, operator, account, ...(user ? { user } : {}) },
      refreshed,
    };
  }

  /** Whether the presented CSRF token is the session's (constant time). */
  csrfMatches(row: SessionRow, presented: string | null): boolean {
    if (!presented) return false;
    const a = Buffer.from(presented);
    const b = Buffer.from(row.csrfToken);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  list(accountId: string): Array<SessionView & { keyLast4: string | null }> {
    return listLiveSessions(this.sqlite, accountId, iso(this.clock())).map((r) => ({ ...viewOf(r), keyLast4: r.keyLast4 }));
  }

  /** Ends one of the account's sessions; 404 SESSION_NOT_FOUND when there is none by that id. */
  revoke(accountId: string, id: string): void {
    if (!deleteSession(this.sqlite, accountId, id)) throw new AppError("SESSION_NOT_FOUND", { details: { sessionId: id } });
  }
}

/** The person a session row belongs to, or null for a key's session. */
export function personOf(r: LiveSessionRow): Person | null {
  return r.userId && r.userRole ? { id: r.userId, name: r.userName ?? "", email: r.userEmail ?? "", role: r.userRole } : null;
}

export function viewOf(r: LiveSessionRow): SessionView {
  const user = personOf(r);
  return {
    id: r.id,
    accountId: r.accountId,
    permission: user ? roleKeyPermission(user.role) : r.permission!,
    createdAt: r.createdAt,
    lastSeenAt: r.lastSeenAt,
    expiresAt: r.expiresAt,
    ipAddress: r.ipAddress,
    userAgent: r.userAgent,
    user,
  };
}

/** The session token from a Cookie header, if the dashboard's cookie is there. */
export function readSessionCookie(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** Set-Cookie for a session token (`null` clears it). Secure whenever the client came over https. */
export function sessionCookie(token: string | null, secure: boolean): string {
  const maxAge = token === null ? 0 : Math.floor(SESSION_TTL_MS / 1000);
  return `${SESSION_COOKIE}=${token ?? ""}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}
