import type { Database } from "bun:sqlite";
import { createHash, randomBytes } from "node:crypto";
import { AppError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import { BucketRegistry } from "../limits/token-bucket";
import { emailProblem, isRole, nameProblem, normalizeEmail, passwordProblem, ROLES, type Person, type Role } from "../domain/people";
import {
  countOwners,
  deleteUser,
  findInvitationByHash,
  findUserByEmail,
  findUserById,
  insertInvitation,
  insertUser,
  listUsers,
  updateUserPassword,
  updateUserRole,
  useInvitation,
  type UserRow,
} from "../db/stores/users";
import type { SessionService } from "./sessions";

/** An invitation link works this long, once (docs/api-decisions.md, "People, roles and the first run"). */
export const INVITATION_TTL_MS = 72 * 3600_000;
/** Failed sign-ins allowed per e-mail: this many, refilled over 15 minutes. */
export const SIGN_IN_FAILURES_PER_EMAIL = 10;
const EMAIL_WINDOW_MS = 15 * 60_000;

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");
export const newLinkToken = (): string => randomBytes(32).toString("base64url");

/** argon2id, as Bun ships it. */
export const hashPassword = (pw: string): Promise<string> => Bun.password.hash(pw, { algorithm: "argon2id" });

export interface PersonView extends Person {
  createdAt: string;
}

const viewOf = (u: UserRow): PersonView => ({ id: u.id, name: u.name, email: u.email, role: u.role, createdAt: u.createdAt });

function invalid(field: string, message: string): AppError {
  return new AppError("VALIDATION_ERROR", { message, details: { field }, errors: [{ field, message }] });
}

/** The fields every new person gives, checked in plain words (the first problem is the message). */
export function checkNewPerson(input: { name?: unknown; email?: unknown; password?: unknown }): { name: string; email: string; password: string } {
  const problems = [
    ["name", nameProblem(input.name)],
    ["email", emailProblem(input.email)],
    ["password", passwordProblem(input.password)],
  ].filter(([, p]) => p) as Array<[string, string]>;
  if (problems.length) {
    throw new AppError("VALIDATION_ERROR", { message: problems[0]![1], details: { field: problems[0]![0] }, errors: problems.map(([field, message]) => ({ field, message })) });
  }
  return { name: (input.name as string).trim(), email: normalizeEmail(input.email as string), password: input.password as string };
}

/**
 * The people of an account: sign-in with e-mail and password, invitations, roles, removal and
 * passwords (docs/api-decisions.md, "People, roles and the first run"). Passwords are hashed with
 * argon2id and never logged; a person's sessions end when they are removed or their password is reset.
 */
export class PeopleService {
  private readonly emailFailures: BucketRegistry;
  /** Verified for an unknown e-mail, so it takes as long as a wrong password (set on first use). */
  private dummyHash: Promise<string> | null = null;

  constructor(private readonly sqlite: Database, private readonly clock: Clock, private readonly sessions: SessionService) {
    this.emailFailures = new BucketRegistry({ capacity: SIGN_IN_FAILURES_PER_EMAIL, refillPerMs: SIGN_IN_FAILURES_PER_EMAIL / EMAIL_WINDOW_MS, clock });
  }

  list(accountId: string | null): Array<PersonView & { accountId: string }> {
    return listUsers(this.sqlite, accountId).map((u) => ({ ...viewOf(u), accountId: u.accountId }));
  }

  find(accountId: string, id: string): UserRow {
    const u = findUserById(this.sqlite, id);
    if (!u || u.accountId !== accountId) throw new AppError("PERSON_NOT_FOUND", { details: { personId: id } });
    return u;
  }

  /** Adds a person to an account (setup, an accepted invitation, the CLI); 409 when the e-mail is taken. */
  async add(accountId: string, input: { name: string; email: string; password: string; role: Role }): Promise<Person & { accountId: string }> {
    return this.addHashed(accountId, { ...input, passwordHash: await hashPassword(input.password) });
  }

  /** `add` with the password already hashed (the CLI hashes before it opens the database). */
  addHashed(accountId: string, input: { name: string; email: string; passwordHash: string; role: Role }): Person & { accountId: string } {
    const passwordHash = input.passwordHash;
    const now = iso(this.clock());
    const row: UserRow = { id: newId(), accountId, email: input.email, name: input.name, passwordHash, role: input.role, createdAt: now, updatedAt: now };
    return this.sqlite.transaction(() => {
      if (findUserByEmail(this.sqlite, input.email)) throw new AppError("EMAIL_TAKEN", { details: { field: "email" }, errors: [{ field: "email", message: "Someone already signs in with this e-mail" }] });
      insertUser(this.sqlite, row);
      return { id: row.id, accountId, name: row.name, email: row.email, role: row.role };
    })();
  }

  /**
   * Checks an e-mail and password. The answer for an unknown e-mail is the same as for a wrong
   * password, and takes as long (a dummy hash is verified). Throws 429 when this e-mail has used up
   * its failed attempts; null when refused (the caller answers 401, counted per address).
   */
  async verify(email: string, password: string): Promise<(Person & { accountId: string }) | null> {
    const key = normalizeEmail(email);
    const peek = this.emailFailures.peek(key);
    if (!peek.allowed) {
      const retryAfter = Math.max(1, Math.ceil(peek.retryAfterMs / 1000));
      throw new AppError("RATE_LIMIT_EXCEEDED", {
        message: `Too many failed sign-ins for this e-mail; retry in ${retryAfter} seconds`,
        details: { limit: SIGN_IN_FAILURES_PER_EMAIL, window: "15 minutes", retryAfter },
        extra: { retryAfter },
        headers: { "Retry-After": String(retryAfter) },
      });
    }
    const user = key.length <= 254 ? findUserByEmail(this.sqlite, key) : null;
    const ok = user
      ? await Bun.password.verify(password, user.passwordHash)
      : (await Bun.password.verify(password, await (this.dummyHash ??= hashPassword(newLinkToken()))), false);
    if (!ok || !user) {
      this.emailFailures.take(key);
      return null;
    }
    return { id: user.id, accountId: user.accountId, name: user.name, email: user.email, role: user.role };
  }

  /** A one-time invitation link's token (72 h) for a role; only its hash is stored. */
  invite(accountId: string, role: unknown, createdBy: string | null): { token: string; role: Role; expiresAt: string } {
    if (!isRole(role)) throw invalid("role", `Choose a role: ${ROLES.join(", ")}`);
    const token = newLinkToken();
    const now = this.clock();
    const expiresAt = iso(now + INVITATION_TTL_MS);
    insertInvitation(this.sqlite, { id: newId(), accountId, tokenHash: hashToken(token), role, createdBy, createdAt: iso(now), expiresAt, usedAt: null });
    return { token, role, expiresAt };
  }

  /** The invited person joins with their name, e-mail and password; the link then stops working. */
  async acceptInvitation(token: unknown, input: { name?: unknown; email?: unknown; password?: unknown }): Promise<Person & { accountId: string }> {
    const inv = typeof token === "string" && token.length >= 20 && token.length <= 100 ? findInvitationByHash(this.sqlite, hashToken(token)) : null;
    const now = this.clock();
    if (!inv || inv.usedAt !== null || Date.parse(inv.expiresAt) <= now) {
      throw new AppError("AUTHENTICATION_ERROR", {
        message: "This invitation link has expired or was already used: ask the owner for a new one",
        details: { provided: "an invitation link", expected: "a link from Settings → People, unused and under 72 hours old" },
      });
    }
    const person = checkNewPerson(input);
    const hash = await hashPassword(person.password);
    return this.sqlite.transaction(() => {
      if (!useInvitation(this.sqlite, inv.id, iso(now))) {
        throw new AppError("AUTHENTICATION_ERROR", { message: "This invitation link was already used: ask the owner for a new one" });
      }
      if (findUserByEmail(this.sqlite, person.email)) throw new AppError("EMAIL_TAKEN", { details: { field: "email" }, errors: [{ field: "email", message: "Someone already signs in with this e-mail" }] });
      const row: UserRow = { id: newId(), accountId: inv.accountId, email: person.email, name: person.name, passwordHash: hash, role: inv.role, createdAt: iso(now), updatedAt: iso(now) };
      insertUser(this.sqlite, row);
      return { id: row.id, accountId: row.accountId, name: row.name, email: row.email, role: row.role };
    })();
  }

  /** Changes a person's role; the last owner cannot be demoted (409 LAST_OWNER). Their sessions act with the new role at once. */
  changeRole(accountId: string, id: string, role: unknown): PersonView {
    if (!isRole(role)) throw invalid("role", `Choose a role: ${ROLES.join(", ")}`);
    return this.sqlite.transaction(() => {
      const u = this.find(accountId, id);
      if (u.role === "owner" && role !== "owner" && countOwners(this.sqlite, accountId) <= 1) {
        throw new AppError("LAST_OWNER", { message: `${u.name} is the only owner: make someone else owner first`, details: { personId: id } });
      }
      updateUserRole(this.sqlite, id, role, iso(this.clock()));
      return viewOf({ ...u, role });
    })();
  }

  /** Removes a person: their sessions end at once. The last owner cannot be removed (409 LAST_OWNER). */
  remove(accountId: string, id: string): void {
    this.sqlite.transaction(() => {
      const u = this.find(accountId, id);
      if (u.role === "owner" && countOwners(this.sqlite, accountId) <= 1) {
        throw new AppError("LAST_OWNER", { message: `${u.name} is the only owner and cannot be removed`, details: { personId: id } });
      }
      deleteUser(this.sqlite, accountId, id);
    })();
  }

  /** A person changes their own password (the current one is checked); their other sessions end. */
  async changePassword(userId: string, currentSessionId: string, current: unknown, next: unknown): Promise<number> {
    const u = findUserById(this.sqlite, userId);
    if (!u) throw new AppError("PERSON_NOT_FOUND", { details: { personId: userId } });
    if (typeof current !== "string" || !(await Bun.password.verify(current, u.passwordHash))) {
      throw invalid("currentPassword", "Your current password is not right");
    }
    const problem = passwordProblem(next);
    if (problem) throw invalid("newPassword", problem);
    updateUserPassword(this.sqlite, userId, await hashPassword(next as string), iso(this.clock()));
    return this.sessions.endPersonSessions(userId, currentSessionId);
  }

  /** Sets a new password (the CLI's reset): every session of that person ends. */
  setPasswordHash(userId: string, passwordHash: string): number {
    updateUserPassword(this.sqlite, userId, passwordHash, iso(this.clock()));
    return this.sessions.endPersonSessions(userId);
  }

  findByEmail(email: string): UserRow | null {
    return findUserByEmail(this.sqlite, normalizeEmail(email));
  }
}

/** A random password a person can type once and then change (letters and digits, 16 characters). */
export function randomPassword(): string {
  const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  let out = "";
  while (out.length < 16) for (const b of randomBytes(32)) if (b < 224 && out.length < 16) out += alphabet[b % 56];
  return out;
}
