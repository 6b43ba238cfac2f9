/**
 * What a caller may do: the permission of an API key (and of the dashboard sessions opened with
 * it), and the authenticated caller a request carries. Pure: no database.
 */
import type { Account } from "./accounts";

export type Permission = "admin_access" | "standard_access";
export const PERMISSIONS: readonly Permission[] = ["admin_access", "standard_access"];

export interface AuthKey {
  keyId: string;
  accountId: string;
  permission: Permission;
  /** A server operator's key: backups and server-wide /metrics (which cover every account). */
  operator: boolean;
  account: Account;
}
