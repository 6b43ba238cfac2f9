/**
 * What a one-time link (an invitation, the setup link) would do if used now, read without using
 * it: the invitation and setup pages say "this link was already used" or "has expired" before
 * they show a form, and an invitation names the business and the role
 * (docs/api-decisions.md, "The owner hears back: each role sees what it can do").
 */
import type { Database } from "bun:sqlite";
import { timingSafeEqual } from "node:crypto";
import type { Clock } from "../lib/clock";
import type { Role } from "../domain/people";
import { findServerSetting } from "../db/server-settings";
import { countUsers, findInvitationByHash } from "../db/stores/users";
import { findBusinessProfile } from "../db/stores/accounts";
import { hashToken } from "./people";
import { EXPIRES_KEY, TOKEN_KEY } from "./setup";

/**
 * ready: the link works; used: it did its job already; expired: its time ran out; unknown: no
 * such link (mistyped, or replaced by a newer setup link).
 */
export type LinkState = "ready" | "used" | "expired" | "unknown";

export interface InvitationLinkState {
  state: LinkState;
  /** The business the person joins and the role they get: only for a link that still works. */
  businessName: string | null;
  role: Role | null;
  expiresAt: string | null;
}

/** Tokens are 43 characters of base64url; anything far from that is no link of ours. */
const plausible = (token: unknown): token is string => typeof token === "string" && token.length >= 20 && token.length <= 100;

export function invitationLinkState(sqlite: Database, clock: Clock, token: unknown): InvitationLinkState {
  const none = { businessName: null, role: null, expiresAt: null };
  const inv = plausible(token) ? findInvitationByHash(sqlite, hashToken(token)) : null;
  if (!inv) return { state: "unknown", ...none };
  if (inv.usedAt) return { state: "used", ...none };
  if (Date.parse(inv.expiresAt) <= clock()) return { state: "expired", ...none };
  const profile = findBusinessProfile(sqlite, inv.accountId);
  return { state: "ready", businessName: profile?.nameSetAt ? profile.name : null, role: inv.role as Role, expiresAt: inv.expiresAt };
}

/** The setup link: used once anyone can sign in with a password; a newer link replaces older ones. */
export function setupLinkState(sqlite: Database, clock: Clock, token: unknown): { state: LinkState } {
  if (countUsers(sqlite) > 0) return { state: "used" };
  const stored = findServerSetting(sqlite, TOKEN_KEY)?.value;
  const expires = findServerSetting(sqlite, EXPIRES_KEY)?.value;
  if (!plausible(token) || !stored || !expires) return { state: "unknown" };
  const a = Buffer.from(hashToken(token), "hex");
  const b = Buffer.from(stored, "hex");
  if (a.length !== b.length || !timingSafeEqual(a, b)) return { state: "unknown" };
  return { state: Date.parse(expires) <= clock() ? "expired" : "ready" };
}
