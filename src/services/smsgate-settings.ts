/**
 * The account's settings document of SMSGate's third-party API (`GET/PUT/PATCH
 * /3rdparty/v1/settings`): stored as given (SMSGate's camelCase shape, unknown keys kept), read by
 * the phones' own settings (DeviceService.settings) and their send rate, and announced to the
 * account's connected phones (SettingsUpdated), which then read their settings again
 * (docs/api-decisions.md, "SMSGate third-party API: devices, health, settings").
 */
import type { Database } from "bun:sqlite";
import { validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { findSmsgateSettings, upsertSmsgateSettings } from "../db/stores/smsgate-settings";
import { applySmsgateSettings, parseStoredSmsgateSettings, sendRateCapOf, type SmsgateSettings } from "../domain/smsgate-settings";

interface Cached {
  doc: SmsgateSettings;
  sendRateCap: number | null;
}

export class SmsgateSettingsService {
  /** Read on every lease a phone asks for: kept per account, replaced when it changes. */
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    /** Tells the account's connected phones their settings changed. */
    private readonly announce: (accountId: string) => void,
  ) {}

  private cached(accountId: string): Cached {
    let c = this.cache.get(accountId);
    if (!c) {
      const doc = parseStoredSmsgateSettings(findSmsgateSettings(this.sqlite, accountId)?.settings);
      c = { doc, sendRateCap: sendRateCapOf(doc) };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(accountId, c);
    }
    return c;
  }

  /** The document as stored (a copy: callers never change the cached one). */
  get(accountId: string): SmsgateSettings {
    return structuredClone(this.cached(accountId).doc);
  }

  /** Texts per minute the document lets each of the account's phones send, or null. */
  sendRateCap(accountId: string): number | null {
    return this.cached(accountId).sendRateCap;
  }

  /** PUT (`replace`) or PATCH (`merge`); a bad body is a 400 and changes nothing. */
  update(accountId: string, body: unknown, mode: "replace" | "merge"): SmsgateSettings {
    const r = applySmsgateSettings(this.cached(accountId).doc, body, mode);
    if (!r.ok) throw validationError(r.errors);
    upsertSmsgateSettings(this.sqlite, { accountId, settings: JSON.stringify(r.value), updatedAt: iso(this.clock()) });
    this.cache.delete(accountId);
    this.announce(accountId);
    return this.get(accountId);
  }
}
