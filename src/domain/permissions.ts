/**
 * What a caller may do: the permission of an API key (and of the dashboard sessions opened with
 * it), and the authenticated caller a request carries. Pure: no database.
 */
import type { Account } from "./accounts";
import type { Actor, Person } from "./people";

export type Permission = "admin_access" | "standard_access";
export const PERMISSIONS: readonly Permission[] = ["admin_access", "standard_access"];

export interface AuthKey {
  /** The key's id; for a person's session `user:<id>` (it keys the limiter, never a row). */
  keyId: string;
  accountId: string;
  permission: Permission;
  /** A server operator's key: backups and server-wide /metrics (which cover every account). */
  operator: boolean;
  account: Account;
  /** The person signed in (a person's dashboard session); absent for an API key. */
  user?: Person;
  /**
   * An SMSGate token (POST /3rdparty/v1/auth/token) acting for the key `keyId`: its scopes limit
   * which SMSGate calls it may make (src/domain/smsgate-tokens.ts); absent for a key itself.
   */
  token?: { jti: string; scopes: string[] };
}

/** The acting person, or the key, as audit fields name them. */
export function actorOf(auth: AuthKey): Actor {
  return auth.user ? { type: "user", id: auth.user.id, name: auth.user.name } : { type: "key", id: auth.keyId };
}
