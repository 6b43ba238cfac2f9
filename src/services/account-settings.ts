/**
 * Account settings (`GET/PUT /v1/account/settings`, admin): keyword lists and the replies sent
 * to them. Read on every received text, so resolved settings are cached per account and dropped
 * when they change.
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { findAccountSettings, upsertAccountSettings } from "../db/stores/account-settings";
import { findBusinessProfile, updateBusinessProfile } from "../db/stores/accounts";
import { DEFAULT_PHONE_COUNTRY } from "../domain/phone";
import { parseBusinessProfile, replyName, type BusinessProfileInput } from "../domain/business-profile";
import { listKeywordReplies } from "../db/stores/keyword-replies";
import {
  applySettingsPatch,
  commonWordsAdded,
  CONFIRM_COMMON_WORDS,
  KEYWORD_LIST_KEYS,
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

/** The business's profile as Settings shows it. */
export interface BusinessProfileView {
  name: string;
  /** false until a person chose the name: replies say "this number" instead. */
  nameSet: boolean;
  country: string;
  /** null: none chosen yet (device times without a zone are read as UTC). */
  timeZone: string | null;
  /** The replies as stored, with {{accountName}} where the name goes (the page previews as the name is typed). */
  replies: Pick<AccountSettings, "optOutReply" | "optInReply" | "helpReply">;
  /** The replies exactly as a customer receives them now. */
  preview: Pick<AccountSettings, "optOutReply" | "optInReply" | "helpReply">;
}

/** The words of a refusal for keywords that are everyday words (shared with the keyword lists). */
export function commonWordsError(found: Array<{ field: string; words: string[] }>): AppError {
  const all = found.flatMap((f) => f.words);
  const quoted = all.map((w) => `"${w}"`).join(", ");
  return new AppError("COMMON_WORDS_UNCONFIRMED", {
    message: `${quoted} ${all.length === 1 ? "is an everyday word" : "are everyday words"} customers often text for other reasons. Confirm to save ${all.length === 1 ? "it" : "them"} anyway (confirmCommonWords: true).`,
    details: { words: Object.fromEntries(found.map((f) => [f.field, f.words])) },
    errors: found.map((f) => ({ field: f.field, message: `${f.words.map((w) => `"${w}"`).join(", ")}: too common to be a keyword without confirmation` })),
  });
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
      s = resolveAccountSettings(findAccountSettings(this.sqlite, accountId)?.settings ?? {});
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(accountId, s);
    }
    return s;
  }

  /** A reply as sent to a customer: the business's name once a person set it, else "this number". */
  reply(accountId: string, key: (typeof REPLY_KEYS)[number]): string {
    return renderReply(this.resolved(accountId)[key], this.nameInReplies(accountId));
  }

  /** An owner's reply text as a customer receives it ({{accountName}} filled in): keyword replies use it too. */
  render(accountId: string, text: string): string {
    return renderReply(text, this.nameInReplies(accountId));
  }

  /** The name replies carry (docs/api-decisions.md, "The business's name, the server address and HTTPS without breaking forms"). */
  private nameInReplies(accountId: string): string {
    const p = findBusinessProfile(this.sqlite, accountId);
    if (p === null) throw new AppError("NOT_FOUND", { message: "Account not found", details: { accountId } });
    return replyName(p.name, p.nameSetAt !== null);
  }

  businessProfile(accountId: string): BusinessProfileView {
    const p = findBusinessProfile(this.sqlite, accountId);
    if (p === null) throw new AppError("NOT_FOUND", { message: "Account not found", details: { accountId } });
    const settings = this.resolved(accountId);
    const name = replyName(p.name, p.nameSetAt !== null);
    const replies = { optOutReply: settings.optOutReply, optInReply: settings.optInReply, helpReply: settings.helpReply };
    const preview = Object.fromEntries(REPLY_KEYS.map((k) => [k, renderReply(settings[k], name)])) as BusinessProfileView["preview"];
    return { name: p.name, nameSet: p.nameSetAt !== null, country: p.defaultCountry ?? DEFAULT_PHONE_COUNTRY, timeZone: p.timeZone, replies, preview };
  }

  /**
   * Sets the business's name, country and time zone (Settings → Business, and the first-run setup
   * page): checked as a whole, written at once; from now on replies carry the name.
   */
  setBusinessProfile(accountId: string, body: BusinessProfileInput | unknown): BusinessProfileView {
    const r = parseBusinessProfile(body);
    if (!r.ok) throw validationError(r.errors);
    const done = updateBusinessProfile(this.sqlite, accountId, { name: r.profile.name, defaultCountry: r.profile.country, timeZone: r.profile.timeZone, at: iso(this.clock()) });
    if (!done) throw new AppError("NOT_FOUND", { message: "Account not found", details: { accountId } });
    return this.businessProfile(accountId);
  }

  get(accountId: string): AccountSettingsView {
    const name = this.nameInReplies(accountId);
    const settings = this.resolved(accountId);
    const preview = Object.fromEntries(REPLY_KEYS.map((k) => [k, renderReply(settings[k], name)])) as AccountSettingsView["preview"];
    return { settings, preview, updatedAt: findAccountSettings(this.sqlite, accountId)?.updatedAt ?? null };
  }

  update(accountId: string, body: unknown): AccountSettingsView {
    this.sqlite.transaction(() => {
      const stored = findAccountSettings(this.sqlite, accountId)?.settings ?? {};
      const r = applySettingsPatch(stored, body);
      if (!r.ok) throw validationError(r.errors);
      const after = resolveAccountSettings(r.stored);
      // A keyword reply's keyword in a STOP/START/HELP list would silence that reply for good
      // (those lists always win): refused here as the reply's own save refuses the other way.
      const taken = new Map<string, string>();
      for (const k of listKeywordReplies(this.sqlite, accountId)) for (const w of k.keywords) taken.set(w, k.reply);
      const clash = KEYWORD_LIST_KEYS.flatMap((k) =>
        after[k].filter((w) => taken.has(w)).map((w) => ({ field: k, message: `"${w}" is the keyword of a keyword reply ("${taken.get(w)!.slice(0, 40)}"); change or delete that reply first.`, requirement: "no keyword reply's keyword", provided: w })),
      );
      if (clash.length) throw validationError(clash);
      // Everyday words ("me", "ok") newly added ask for confirmation (docs/api-decisions.md, "Keyword phrases").
      const common = commonWordsAdded(resolveAccountSettings(stored), after);
      if (common.length && (body as Record<string, unknown>)[CONFIRM_COMMON_WORDS] !== true) throw commonWordsError(common);
      upsertAccountSettings(this.sqlite, { accountId, settings: r.stored, updatedAt: iso(this.clock()) });
    })();
    this.cache.delete(accountId);
    return this.get(accountId);
  }
}
