import type { Database } from "bun:sqlite";
import { createHash, randomBytes } from "node:crypto";
import { AppError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import { PasswordGuessLimits, type GuessRefusal } from "../limits/password-guesses";
import { REFUSED_GUESS_DELAY_MS, REFUSED_GUESSES_HELD_MAX, Tarpit } from "../limits/tarpit";
import { DEFAULT_AUTH_FAILURES_PER_MINUTE } from "../config";
import { hasLiveSessionFrom } from "../db/stores/sessions";
import { PasswordHasher } from "./password-hasher";
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

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");
export const newLinkToken = (): string => randomBytes(32).toString("base64url");

/** argon2id, as Bun ships it (the CLI's; the server hashes on its password thread: password-hasher.ts). */
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
  private readonly hasher: PasswordHasher;
  private readonly guesses: PasswordGuessLimits;
  private readonly refusals: Tarpit;
  /** Verified for an unknown e-mail, so it takes as long as a wrong password (set on first use). */
  private dummyHash: Promise<string> | null = null;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
    opts: { hasher?: PasswordHasher; authFailuresPerMinute?: number; refusalDelayMs?: number } = {},
  ) {
    this.hasher = opts.hasher ?? new PasswordHasher();
    this.guesses = new PasswordGuessLimits(opts.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE, clock);
    this.refusals = new Tarpit(opts.refusalDelayMs ?? REFUSED_GUESS_DELAY_MS, REFUSED_GUESSES_HELD_MAX);
  }

  /** The password thread (the server stops it on shutdown). */
  get passwords(): PasswordHasher {
    return this.hasher;
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
    return this.addHashed(accountId, { ...input, passwordHash: await this.hasher.hash(input.password) });
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
   * Checks an e-mail and password from `address`. The answer for an unknown e-mail is the same as
   * for a wrong password, and takes as long (a dummy hash is verified). Throws 429 past the
   * password-guess limits (src/limits/password-guesses.ts); null when refused (the caller answers 401).
   */
  async verify(email: string, password: string, address: string): Promise<(Person & { accountId: string }) | null> {
    const key = normalizeEmail(email);
    const user = key.length <= 254 ? findUserByEmail(this.sqlite, key) : null;
    const ok = await this.checkPassword(key, address, user, password);
    if (!ok || !user) return null;
    return { id: user.id, accountId: user.accountId, name: user.name, email: user.email, role: user.role };
  }

  /**
   * The one place a password is verified (sign-in, a password change): the limits first, then the
   * check on the password thread, and a wrong password counted for the e-mail and the address.
   */
  private async checkPassword(email: string, address: string, user: UserRow | null, password: string): Promise<boolean> {
    // Counted per password: `textwire users reset-password` starts the e-mail's count afresh.
    const counted = user ? `${email}\n${user.passwordHash.slice(-16)}` : email;
    const refusal = this.guesses.check(counted, address, () => user !== null && hasLiveSessionFrom(this.sqlite, user.id, address, iso(this.clock())));
    if (refusal) {
      // Answered after a pause: a guesser going back to back gets one refusal a second, not thousands.
      await this.refusals.hold();
      throw tooManyGuesses(refusal);
    }
    const ok = user
      ? await this.hasher.verify(password, user.passwordHash)
      : (await this.hasher.verify(password, await (this.dummyHash ??= this.hasher.hash(newLinkToken()))), false);
    if (!ok) this.guesses.failed(counted, address);
    return ok;
  }

  /**
   * A one-time invitation link's token (72 h) for a role and the e-mail the inviter typed; only
   * its hash is stored. 409 EMAIL_TAKEN when someone of this account already signs in with it
   * (another account's people are never told apart from strangers: docs/api-decisions.md,
   * "Nothing the phone reports is lost, and nobody takes the dashboard: hardening round three").
   */
  invite(accountId: string, input: { role?: unknown; email?: unknown }, createdBy: string | null): { token: string; role: Role; email: string; expiresAt: string } {
    const role = input.role;
    const problems: Array<[string, string]> = [];
    if (!isRole(role)) problems.push(["role", `Choose a role: ${ROLES.join(", ")}`]);
    const emailIssue = emailProblem(input.email);
    if (emailIssue) problems.push(["email", emailIssue]);
    if (problems.length) {
      throw new AppError("VALIDATION_ERROR", { message: problems[0]![1], details: { field: problems[0]![0] }, errors: problems.map(([field, message]) => ({ field, message })) });
    }
    const email = normalizeEmail(input.email as string);
    const existing = findUserByEmail(this.sqlite, email);
    if (existing && existing.accountId === accountId) {
      throw new AppError("EMAIL_TAKEN", { message: `${existing.name} already signs in with this e-mail`, details: { field: "email" }, errors: [{ field: "email", message: "Someone on your team already signs in with this e-mail" }] });
    }
    const token = newLinkToken();
    const now = this.clock();
    const expiresAt = iso(now + INVITATION_TTL_MS);
    insertInvitation(this.sqlite, { id: newId(), accountId, tokenHash: hashToken(token), role: role as Role, createdBy, createdAt: iso(now), expiresAt, usedAt: null, email });
    return { token, role: role as Role, email, expiresAt };
  }

  /**
   * The invited person joins with their name and password, under the e-mail the invitation was
   * made for; the link then stops working. An e-mail that signs in elsewhere by now ends the link
   * with the answer every used or expired link gets: its holder learns nothing of other accounts.
   */
  async acceptInvitation(token: unknown, input: { name?: unknown; password?: unknown }): Promise<Person & { accountId: string }> {
    const inv = typeof token === "string" && token.length >= 20 && token.length <= 100 ? findInvitationByHash(this.sqlite, hashToken(token)) : null;
    const now = this.clock();
    const unusable = () =>
      new AppError("AUTHENTICATION_ERROR", {
        message: "This invitation link has expired or was already used: ask the owner for a new one",
        details: { provided: "an invitation link", expected: "a link from Settings → People, unused and under 72 hours old" },
      });
    if (!inv || inv.usedAt !== null || inv.email === null || Date.parse(inv.expiresAt) <= now) throw unusable();
    const person = checkNewPerson({ name: input.name, email: inv.email, password: input.password });
    const hash = await this.hasher.hash(person.password);
    const outcome = this.sqlite.transaction((): (Person & { accountId: string }) | null => {
      if (!useInvitation(this.sqlite, inv.id, iso(now))) return null;
      // Used up either way: a holder cannot come back to it.
      if (findUserByEmail(this.sqlite, person.email)) return null;
      const row: UserRow = { id: newId(), accountId: inv.accountId, email: person.email, name: person.name, passwordHash: hash, role: inv.role, createdAt: iso(now), updatedAt: iso(now) };
      insertUser(this.sqlite, row);
      return { id: row.id, accountId: row.accountId, name: row.name, email: row.email, role: row.role };
    })();
    if (!outcome) throw unusable();
    return outcome;
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

  /**
   * A person changes their own password from `address`: the new one is checked first, then the
   * current one under the same limits as a sign-in (429 past them); their other sessions end.
   */
  async changePassword(userId: string, currentSessionId: string, current: unknown, next: unknown, address: string): Promise<number> {
    const u = findUserById(this.sqlite, userId);
    if (!u) throw new AppError("PERSON_NOT_FOUND", { details: { personId: userId } });
    if (typeof current !== "string" || current === "") throw invalid("currentPassword", "Enter your current password");
    const problem = passwordProblem(next);
    if (problem) throw invalid("newPassword", problem);
    if (!(await this.checkPassword(u.email, address, u, current))) throw invalid("currentPassword", "Your current password is not right");
    updateUserPassword(this.sqlite, userId, await this.hasher.hash(next as string), iso(this.clock()));
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

/** 429 for a password check past a limit: which one, and when to try again (Retry-After). */
function tooManyGuesses(r: GuessRefusal): AppError {
  const retryAfter = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
  const message =
    r.scope === "address"
      ? `Too many wrong passwords from this address; retry in ${retryAfter} seconds`
      : r.scope === "pair"
        ? `Too many wrong passwords for this e-mail; retry in ${retryAfter} seconds, or ask the owner or the server's operator to reset it`
        : `Too many wrong passwords for this e-mail from many places; sign in from a device already signed in, retry in ${retryAfter} seconds, or ask the server's operator to reset it`;
  return new AppError("RATE_LIMIT_EXCEEDED", {
    message,
    details: { limit: r.limit, window: r.window, retryAfter, scope: r.scope },
    extra: { retryAfter },
    headers: { "Retry-After": String(retryAfter) },
  });
}

/** A random password a person can type once and then change (letters and digits, 16 characters). */
export function randomPassword(): string {
  const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  let out = "";
  while (out.length < 16) for (const b of randomBytes(32)) if (b < 224 && out.length < 16) out += alphabet[b % 56];
  return out;
}
