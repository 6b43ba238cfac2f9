/**
 * The account's settings document of SMSGate's third-party API (`GET/PUT/PATCH
 * /3rdparty/v1/settings`): stored as given (SMSGate's camelCase shape, unknown keys kept), read by
 * the phones' own settings and their send rate (DeviceService.settings, sendRate), and announced to the
 * account's connected phones (SettingsUpdated), which then read their settings again
 * (docs/api-decisions.md, "SMSGate third-party API: devices, health, settings").
 *
 * `webhooks.signingKey` is the account's SMSGate signing key (the one that signs SMSGate-format
 * webhooks, ThirdPartyMessages.signingKey), not a key of the document: shown to those who may read
 * it, set in the same transaction as the document (docs/api-decisions.md, "SMSGate: signing key in
 * the settings document, and re-sent history").
 */
import type { Database } from "bun:sqlite";
import { validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { findSmsgateSettings, upsertSmsgateSettings } from "../db/stores/smsgate-settings";
import { applySmsgateSettings, smsgateSettingsView, type SmsgateSettings } from "../domain/smsgate-settings";
import type { ThirdPartyMessages } from "./thirdparty-messages";

/** Whether the caller may see the signing key (it signs what leaves the server: a secret). */
export interface SettingsReader {
  withSigningKey: boolean;
}

export class SmsgateSettingsService {
  /** Read on every lease a phone asks for: kept per account, replaced when it changes. */
  private readonly cache = new Map<string, SmsgateSettings>();

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    /** Tells the account's connected phones their settings changed. */
    private readonly announce: (accountId: string) => void,
    /** The account's SMSGate signing key (`webhooks.signingKey` of the document). */
    private readonly keys: Pick<ThirdPartyMessages, "signingKey" | "setSigningKey">,
  ) {}

  /** The cached document: read only (the lease path reads it; it is never handed out to change). */
  peek(accountId: string): Readonly<SmsgateSettings> {
    let doc = this.cache.get(accountId);
    if (!doc) {
      doc = findSmsgateSettings(this.sqlite, accountId)?.settings ?? {};
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(accountId, doc);
    }
    return doc;
  }

  /** The document as stored (a copy: callers never change the cached one), with the signing key for those who may see it. */
  get(accountId: string, reader: SettingsReader): SmsgateSettings {
    return smsgateSettingsView(structuredClone(this.peek(accountId)), reader.withSigningKey ? this.keys.signingKey(accountId) : null);
  }

  /**
   * PUT (`replace`) or PATCH (`merge`); a bad body is a 400 and changes nothing. A signing key in
   * the body is written in the same transaction as the document.
   */
  update(accountId: string, body: unknown, mode: "replace" | "merge", reader: SettingsReader): SmsgateSettings {
    const r = applySmsgateSettings(this.peek(accountId), body, mode);
    if (!r.ok) throw validationError(r.errors);
    this.sqlite.transaction(() => {
      upsertSmsgateSettings(this.sqlite, { accountId, settings: r.value, updatedAt: iso(this.clock()) });
      if (r.signingKey !== null) this.keys.setSigningKey(accountId, r.signingKey);
    })();
    this.cache.delete(accountId);
    this.announce(accountId);
    return this.get(accountId, reader);
  }
}
