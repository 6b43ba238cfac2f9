/**
 * Account settings: the keyword lists and the replies Textwire sends to them. Pure:
 * validation, merging and defaults. Only the values an owner set are stored; every other one is
 * its default, so a default that names the business follows a rename of the account.
 */
import {
  DEFAULT_HELP_KEYWORDS,
  DEFAULT_OPT_IN_KEYWORDS,
  DEFAULT_OPT_OUT_KEYWORDS,
  MAX_KEYWORD_LENGTH,
  parseKeyword,
  tooCommon,
  type KeywordKind,
  type KeywordLists,
} from "./keywords";
import type { FieldError } from "./submission";
import { parseLimits, resolveLimits, type LimitsOverride, type SendingLimits } from "./sending-budget";

/** How the account's phones send (docs/phones.md, "How fast a phone sends"). */
export interface SendingSettingsOf<L> {
  /** Every phone's and SIM's budget unless the phone or SIM sets its own. */
  limits: L;
  /** A contact's texts move off its own phone once that phone is paused or offline this long. */
  stickyMoveAfterMinutes: number;
}

export interface AccountSettings extends KeywordLists {
  optOutReply: string;
  optInReply: string;
  helpReply: string;
  sending: SendingSettingsOf<SendingLimits>;
}

/** What is stored: the owner's own values only. */
export type StoredAccountSettings = Partial<Omit<AccountSettings, "sending">> & { sending?: Partial<SendingSettingsOf<LimitsOverride>> };

export const STICKY_MOVE_AFTER_MINUTES_DEFAULT = 10;
export const STICKY_MOVE_AFTER_MINUTES_MAX = 7 * 24 * 60;

/** `{{accountName}}` in a reply is replaced by the account's name when it is sent. */
export const ACCOUNT_NAME_PLACEHOLDER = "{{accountName}}";

export const DEFAULT_REPLIES = Object.freeze({
  optOutReply: `You're unsubscribed from ${ACCOUNT_NAME_PLACEHOLDER}. Reply START to resubscribe.`,
  optInReply: `You're resubscribed to ${ACCOUNT_NAME_PLACEHOLDER}. Reply STOP to unsubscribe.`,
  helpReply: `${ACCOUNT_NAME_PLACEHOLDER}: texts about your requests. Reply STOP to unsubscribe, START to resubscribe.`,
});

export const KEYWORD_LIST_KEYS = ["optOutKeywords", "optInKeywords", "helpKeywords"] as const;
export const REPLY_KEYS = ["optOutReply", "optInReply", "helpReply"] as const;
export const ACCOUNT_SETTING_KEYS = [...KEYWORD_LIST_KEYS, ...REPLY_KEYS, "sending"] as const;
/** Not a setting: `true` saves keywords that are everyday words (docs/api-decisions.md, "Keyword phrases"). */
export const CONFIRM_COMMON_WORDS = "confirmCommonWords";
/** What each list does (for the words too common for it). */
export const KIND_OF_LIST: Record<(typeof KEYWORD_LIST_KEYS)[number], KeywordKind> = { optOutKeywords: "opt-out", optInKeywords: "opt-in", helpKeywords: "help" };
/** Keywords per list. */
export const MAX_KEYWORDS = 30;
/** A reply fits in two SMS segments. */
export const MAX_REPLY_LENGTH = 306;

const DEFAULT_LISTS: KeywordLists = {
  optOutKeywords: DEFAULT_OPT_OUT_KEYWORDS,
  optInKeywords: DEFAULT_OPT_IN_KEYWORDS,
  helpKeywords: DEFAULT_HELP_KEYWORDS,
};

/** Stored values over the defaults; replies still carry the placeholder. */
export function resolveAccountSettings(stored: StoredAccountSettings): AccountSettings {
  return {
    optOutKeywords: stored.optOutKeywords ?? DEFAULT_LISTS.optOutKeywords,
    optInKeywords: stored.optInKeywords ?? DEFAULT_LISTS.optInKeywords,
    helpKeywords: stored.helpKeywords ?? DEFAULT_LISTS.helpKeywords,
    optOutReply: stored.optOutReply ?? DEFAULT_REPLIES.optOutReply,
    optInReply: stored.optInReply ?? DEFAULT_REPLIES.optInReply,
    helpReply: stored.helpReply ?? DEFAULT_REPLIES.helpReply,
    sending: {
      limits: resolveLimits(stored.sending?.limits),
      stickyMoveAfterMinutes: stored.sending?.stickyMoveAfterMinutes ?? STICKY_MOVE_AFTER_MINUTES_DEFAULT,
    },
  };
}

/**
 * `sending` of a PUT body: `limits` (keys given replace, null keys or a null object go back to
 * the defaults) and `stickyMoveAfterMinutes` (whole minutes ≥ 1; null = default).
 */
function applySendingPatch(stored: StoredAccountSettings["sending"], v: unknown, errors: FieldError[]): StoredAccountSettings["sending"] | undefined {
  if (v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) {
    errors.push({ field: "sending", message: "sending must be an object {limits, stickyMoveAfterMinutes}", requirement: "object", provided: typeof v });
    return stored;
  }
  const o = v as Record<string, unknown>;
  const next: NonNullable<StoredAccountSettings["sending"]> = { ...stored, ...(stored?.limits ? { limits: { ...stored.limits } } : {}) };
  for (const k of Object.keys(o)) {
    if (k !== "limits" && k !== "stickyMoveAfterMinutes") errors.push({ field: `sending.${k.slice(0, 50)}`, message: "sending has only limits and stickyMoveAfterMinutes", requirement: "limits, stickyMoveAfterMinutes", provided: k.slice(0, 50) });
  }
  if (Object.hasOwn(o, "limits")) {
    const r = parseLimits(o.limits, "sending.limits");
    if (!r.ok) errors.push(...r.errors);
    else if (o.limits === null) delete next.limits;
    else {
      const merged: Record<string, unknown> = { ...next.limits, ...r.limits };
      for (const [k, x] of Object.entries(o.limits as Record<string, unknown>)) if (x === null) delete merged[k];
      next.limits = merged as LimitsOverride;
      // The merged set must still nest (an hour may not allow less than a minute).
      const check = parseLimits({ ...resolveLimits(next.limits) }, "sending.limits");
      if (!check.ok) errors.push(...check.errors);
    }
  }
  if (Object.hasOwn(o, "stickyMoveAfterMinutes")) {
    const m = o.stickyMoveAfterMinutes;
    if (m === null) delete next.stickyMoveAfterMinutes;
    else if (typeof m !== "number" || !Number.isInteger(m) || m < 1 || m > STICKY_MOVE_AFTER_MINUTES_MAX) {
      errors.push({ field: "sending.stickyMoveAfterMinutes", message: `stickyMoveAfterMinutes must be a whole number of minutes from 1 to ${STICKY_MOVE_AFTER_MINUTES_MAX}`, requirement: `integer 1-${STICKY_MOVE_AFTER_MINUTES_MAX}`, provided: m });
    } else next.stickyMoveAfterMinutes = m;
  }
  return next;
}

/** A reply as sent: the placeholder replaced by the account's name. */
export function renderReply(text: string, accountName: string): string {
  return text.split(ACCOUNT_NAME_PLACEHOLDER).join(accountName);
}

/**
 * Applies a PUT body to the stored settings: a key given replaces, `null` goes back to the
 * default, keys not given stay. Every problem is reported; nothing is applied when there is one.
 */
export function applySettingsPatch(
  stored: StoredAccountSettings,
  body: unknown,
): { ok: true; stored: StoredAccountSettings } | { ok: false; errors: FieldError[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ field: "body", message: "the body must be a JSON object of settings", requirement: "object", provided: null }] };
  }
  const b = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  const next: StoredAccountSettings = { ...stored };
  for (const k of Object.keys(b)) {
    if (k === CONFIRM_COMMON_WORDS) {
      if (typeof b[k] !== "boolean") errors.push({ field: k, message: `${k} must be true or false`, requirement: "boolean", provided: typeof b[k] });
      continue;
    }
    if (!(ACCOUNT_SETTING_KEYS as readonly string[]).includes(k)) {
      errors.push({ field: k, message: `unknown setting '${k.slice(0, 50)}'; allowed: ${ACCOUNT_SETTING_KEYS.join(", ")}`, requirement: ACCOUNT_SETTING_KEYS.join(", "), provided: k.slice(0, 50) });
    }
  }
  if (Object.hasOwn(b, "sending")) {
    const sending = applySendingPatch(stored.sending, b.sending, errors);
    if (sending === undefined) delete next.sending;
    else next.sending = sending;
  }
  for (const k of KEYWORD_LIST_KEYS) {
    if (!Object.hasOwn(b, k)) continue;
    const v = b[k];
    if (v === null) {
      delete next[k];
      continue;
    }
    const r = parseKeywordList(k, v);
    if (!r.ok) errors.push(r.error);
    else next[k] = r.keywords;
  }
  for (const k of REPLY_KEYS) {
    if (!Object.hasOwn(b, k)) continue;
    const v = b[k];
    if (v === null) {
      delete next[k];
      continue;
    }
    if (typeof v !== "string" || v.trim() === "" || v.trim().length > MAX_REPLY_LENGTH) {
      errors.push({
        field: k,
        message: `${k} must be a text of 1 to ${MAX_REPLY_LENGTH} characters (null restores the default)`,
        requirement: `1-${MAX_REPLY_LENGTH} characters`,
        provided: typeof v === "string" ? `${v.length} characters` : v,
      });
      continue;
    }
    next[k] = v.trim();
  }
  if (errors.length === 0) {
    // One word in two lists would make a reply ambiguous.
    const r = resolveAccountSettings(next);
    const seen = new Map<string, string>();
    for (const k of KEYWORD_LIST_KEYS) {
      for (const w of r[k]) {
        const other = seen.get(w);
        if (other !== undefined) {
          errors.push({ field: k, message: `${w} is in both ${other} and ${k}; a keyword can mean one thing only`, requirement: "lists without shared words", provided: w });
        } else seen.set(w, k);
      }
    }
  }
  return errors.length ? { ok: false, errors } : { ok: true, stored: next };
}

/**
 * A list of keywords or phrases as typed (one per line in Settings): each normalised
 * (src/domain/keywords.ts), duplicates dropped. Shared by the STOP/START/HELP lists and the
 * keyword replies.
 */
export function parseKeywordList(field: string, v: unknown, max = MAX_KEYWORDS): { ok: true; keywords: string[] } | { ok: false; error: FieldError } {
  const requirement = `list of 1-${max} words or phrases (letters and digits, up to ${MAX_KEYWORD_LENGTH} characters each)`;
  if (!Array.isArray(v) || v.length === 0 || v.length > max) {
    return { ok: false, error: { field, message: `${field} must be a list of 1 to ${max} keywords`, requirement, provided: Array.isArray(v) ? `${v.length} items` : typeof v === "string" ? v.slice(0, 100) : v === null ? null : typeof v } };
  }
  const keywords: string[] = [];
  for (const w of v) {
    const k = parseKeyword(w);
    if (k === null) {
      return {
        ok: false,
        error: {
          field,
          message: `${field}: each keyword must be a word or a short phrase of letters and digits, up to ${MAX_KEYWORD_LENGTH} characters (it matches a whole text)`,
          requirement,
          provided: typeof w === "string" ? w.slice(0, 100) : w === null ? null : typeof w,
        },
      };
    }
    if (!keywords.includes(k)) keywords.push(k);
  }
  return { ok: true, keywords };
}

/**
 * The everyday words a change adds to the keyword lists (not those already in them, so saving a
 * reply never asks again about a list the owner confirmed before), per list.
 */
export function commonWordsAdded(before: KeywordLists, after: KeywordLists): Array<{ field: (typeof KEYWORD_LIST_KEYS)[number]; words: string[] }> {
  const out: Array<{ field: (typeof KEYWORD_LIST_KEYS)[number]; words: string[] }> = [];
  for (const k of KEYWORD_LIST_KEYS) {
    const words = tooCommon(KIND_OF_LIST[k], after[k].filter((w) => !before[k].includes(w)));
    if (words.length) out.push({ field: k, words });
  }
  return out;
}

/** Reads a stored JSON text; anything unreadable counts as "nothing set". */
export function parseStoredSettings(text: string | null | undefined): StoredAccountSettings {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    if (typeof v !== "object" || v === null || Array.isArray(v)) return {};
    const out: StoredAccountSettings = {};
    for (const k of KEYWORD_LIST_KEYS) if (Array.isArray(v[k]) && v[k].every((w: unknown) => typeof w === "string")) out[k] = v[k];
    for (const k of REPLY_KEYS) if (typeof v[k] === "string") out[k] = v[k];
    if (typeof v.sending === "object" && v.sending !== null) {
      // Stored by applySettingsPatch, so already checked; read back only what still checks.
      const limits = parseLimits(v.sending.limits ?? null, "sending.limits");
      const m = v.sending.stickyMoveAfterMinutes;
      out.sending = {
        ...(limits.ok && v.sending.limits ? { limits: limits.limits } : {}),
        ...(Number.isInteger(m) && m >= 1 && m <= STICKY_MOVE_AFTER_MINUTES_MAX ? { stickyMoveAfterMinutes: m } : {}),
      };
    }
    return out;
  } catch {
    return {};
  }
}
