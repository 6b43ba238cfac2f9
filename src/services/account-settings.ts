/**
 * Account settings (`GET/PUT /v1/account/settings`, admin): keyword lists and the replies sent
 * to them. Read on every received text, so resolved settings are cached per account and dropped
 * when they change.
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { findAccountSettings, upsertAccountSettings } from "../db/stores/account-settings";
import { accountName } from "../db/stores/accounts";
import {
  applySettingsPatch,
  parseStoredSettings,
  renderReply,
  resolveAccountSettings,
  REPLY_KEYS,
  type AccountSettings,
} from "../domain/account-settings";

export interface AccountSettingsView {
  settings: AccountSettings;
  /** The replies as a customer receives them ({{accountName}} filled in). */
  preview: Pick<AccountSettings, "optOutReply" | "optInReply" | "helpReply">;
  updatedAt: string | null;
}

export class AccountSettingsService {
  private readonly cache = new Map<string, AccountSettings>();

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
  ) {}

  /** The effective settings (defaults filled in). */
  resolved(accountId: string): AccountSettings {
    let s = this.cache.get(accountId);
    if (!s) {
      s = resolveAccountSettings(parseStoredSettings(findAccountSettings(this.sqlite, accountId)?.settings));
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(accountId, s);
    }
    return s;
  }

  /** A reply as sent to a customer. */
  reply(accountId: string, key: (typeof REPLY_KEYS)[number]): string {
    return renderReply(this.resolved(accountId)[key], accountName(this.sqlite, accountId) ?? "us");
  }

  get(accountId: string): AccountSettingsView {
    const name = accountName(this.sqlite, accountId);
    if (name === null) throw new AppError("NOT_FOUND", { message: "Account not found", details: { accountId } });
    const settings = this.resolved(accountId);
    const preview = Object.fromEntries(REPLY_KEYS.map((k) => [k, renderReply(settings[k], name)])) as AccountSettingsView["preview"];
    return { settings, preview, updatedAt: findAccountSettings(this.sqlite, accountId)?.updatedAt ?? null };
  }

  update(accountId: string, body: unknown): AccountSettingsView {
    this.sqlite.transaction(() => {
      const stored = parseStoredSettings(findAccountSettings(this.sqlite, accountId)?.settings);
      const r = applySettingsPatch(stored, body);
      if (!r.ok) throw validationError(r.errors);
      upsertAccountSettings(this.sqlite, { accountId, settings: JSON.stringify(r.stored), updatedAt: iso(this.clock()) });
    })();
    this.cache.delete(accountId);
    return this.get(accountId);
  }
}
