import type { Database } from "bun:sqlite";
import { AppError } from "../errors";
import { countLiveAdminKeys } from "../db/stores/accounts";
import type { AccountService } from "./accounts";
import { PERMISSIONS, type Permission } from "../domain/permissions";

/**
 * An account's own API keys, for its admins (the dashboard's Settings): list, create (the key is
 * shown once), revoke. Operator keys stay the CLI's: an account admin cannot mint a key that
 * covers every account on the server. The account's last live admin key cannot be revoked here —
 * that would lock the owner out of everything but the command line.
 */
export class ApiKeyService {
  constructor(private readonly sqlite: Database, private readonly accounts: AccountService) {}

  list(accountId: string) {
    return this.accounts.listKeys(accountId);
  }

  create(accountId: string, body: { permission?: unknown }) {
    const permission = body.permission ?? "standard_access";
    if (typeof permission !== "string" || !PERMISSIONS.includes(permission as Permission)) {
      throw new AppError("VALIDATION_ERROR", {
        message: "permission must be admin_access or standard_access",
        details: { field: "permission", requirement: "admin_access | standard_access", provided: permission },
        errors: [{ field: "permission", message: "permission must be admin_access or standard_access" }],
      });
    }
    return this.accounts.createKey(accountId, permission as Permission);
  }

  revoke(accountId: string, keyId: string): void {
    const key = this.accounts.listKeys(accountId).find((k) => k.keyId === keyId && k.revokedAt === null);
    if (!key) throw new AppError("KEY_NOT_FOUND", { details: { keyId } });
    if (key.permission === "admin_access") {
      if (countLiveAdminKeys(this.sqlite, accountId) <= 1) {
        throw new AppError("INVALID_STATE", {
          message: "This is the account's last admin key: create another admin key before revoking it",
          details: { keyId, reason: "last-admin-key" },
        });
      }
    }
    this.accounts.revokeKey(keyId);
  }
}
