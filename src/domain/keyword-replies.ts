/**
 * Keyword replies (GET/POST /v1/keyword-replies, PUT/DELETE /v1/keyword-replies/<id>; docs/api-
 * decisions.md, "Keyword replies"): an owner's automatic answer to a text that is one of its
 * keywords ("HOURS" → "We're open 9–5, Mon–Sat."), with tags and a status given to the contact.
 * Pure: validation of a body, the collisions with STOP/START/HELP and with other replies, and
 * which rule a text matches (the same matching as STOP, src/domain/keywords.ts).
 */
import { parseKeywordList, MAX_REPLY_LENGTH } from "./account-settings";
import { CONTACT_STATUSES, isContactStatus, validateTags, type ContactStatus } from "./contact-update";
import { normalizeKeyword, tooCommon, type KeywordLists } from "./keywords";
import type { FieldError } from "./submission";

/** Keywords per reply. */
export const MAX_KEYWORDS_PER_REPLY = 20;
/** Keyword replies per account (each inbound text is compared with all of them). */
export const MAX_KEYWORD_REPLIES = 100;
/** A contact is answered by one rule at most once in this time (ms). */
export const KEYWORD_REPLY_INTERVAL_MS = 60 * 60 * 1000;

export interface KeywordReplyInput {
  keywords: string[];
  reply: string;
  addTags: string[];
  setStatus: ContactStatus | null;
  isActive: boolean;
}

/** A rule as matching needs it. */
export interface KeywordRule {
  id: string;
  keywords: readonly string[];
  isActive: boolean;
}

const KEYS = ["keywords", "reply", "addTags", "setStatus", "isActive", "confirmCommonWords"] as const;

/**
 * A POST body (`current` null: keywords and reply required) or a PUT body (given keys replace the
 * current ones). Every problem is named by its field.
 */
export function parseKeywordReply(
  body: unknown,
  current: KeywordReplyInput | null,
): { ok: true; value: KeywordReplyInput; confirmCommonWords: boolean } | { ok: false; errors: FieldError[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ field: "body", message: "the body must be a JSON object", requirement: "object", provided: null }] };
  }
  const b = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const k of Object.keys(b)) {
    if (!(KEYS as readonly string[]).includes(k)) errors.push({ field: k.slice(0, 50), message: `unknown field '${k.slice(0, 50)}'; allowed: ${KEYS.join(", ")}`, requirement: KEYS.join(", "), provided: null });
  }
  const v: KeywordReplyInput = current ? { ...current } : { keywords: [], reply: "", addTags: [], setStatus: null, isActive: true };
  if (Object.hasOwn(b, "keywords") || current === null) {
    const r = parseKeywordList("keywords", b.keywords, MAX_KEYWORDS_PER_REPLY);
    if (r.ok) v.keywords = r.keywords;
    else errors.push(r.error);
  }
  if (Object.hasOwn(b, "reply") || current === null) {
    const r = b.reply;
    if (typeof r !== "string" || r.trim() === "" || r.trim().length > MAX_REPLY_LENGTH) {
      errors.push({
        field: "reply",
        message: `reply must be a text of 1 to ${MAX_REPLY_LENGTH} characters`,
        requirement: `1-${MAX_REPLY_LENGTH} characters`,
        provided: typeof r === "string" ? `${r.length} characters` : r === undefined ? null : typeof r,
      });
    } else v.reply = r.trim();
  }
  if (Object.hasOwn(b, "addTags")) {
    if (b.addTags === null) v.addTags = [];
    else {
      const tags = validateTags(b.addTags, errors, "addTags");
      if (tags) v.addTags = tags;
    }
  }
  if (Object.hasOwn(b, "setStatus")) {
    if (b.setStatus === null || isContactStatus(b.setStatus)) v.setStatus = b.setStatus;
    else errors.push({ field: "setStatus", message: `setStatus must be one of ${CONTACT_STATUSES.join(", ")}, or null`, requirement: `${CONTACT_STATUSES.join(", ")} or null`, provided: typeof b.setStatus === "string" ? b.setStatus.slice(0, 50) : typeof b.setStatus });
  }
  if (Object.hasOwn(b, "isActive")) {
    if (typeof b.isActive === "boolean") v.isActive = b.isActive;
    else errors.push({ field: "isActive", message: "isActive must be true or false", requirement: "boolean", provided: typeof b.isActive });
  }
  let confirmCommonWords = false;
  if (Object.hasOwn(b, "confirmCommonWords")) {
    if (typeof b.confirmCommonWords === "boolean") confirmCommonWords = b.confirmCommonWords;
    else errors.push({ field: "confirmCommonWords", message: "confirmCommonWords must be true or false", requirement: "boolean", provided: typeof b.confirmCommonWords });
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: v, confirmCommonWords };
}

/**
 * Keywords a reply cannot have: the account's STOP/START/HELP keywords (they always win, so the
 * reply would never be sent: refused, in plain words) and another reply's keywords (which one
 * would answer?). Errors name the field `keywords`.
 */
export function keywordCollisions(keywords: readonly string[], lists: KeywordLists, others: readonly KeywordRule[]): FieldError[] {
  const errors: FieldError[] = [];
  const listNames: Array<[keyof KeywordLists, string]> = [
    ["optOutKeywords", "stops all texts (opt-out)"],
    ["optInKeywords", "starts texts again (opt-in)"],
    ["helpKeywords", "is answered with the help reply"],
  ];
  for (const k of keywords) {
    const list = listNames.find(([key]) => lists[key].includes(k));
    if (list) {
      errors.push({
        field: "keywords",
        message: `"${k}" already ${list[1]} in Settings, and that always comes first, so this reply would never be sent. Choose another keyword.`,
        requirement: "not an opt-out, opt-in or help keyword",
        provided: k,
      });
    } else if (others.some((o) => o.keywords.includes(k))) {
      errors.push({ field: "keywords", message: `"${k}" is already the keyword of another reply. A keyword can start one reply only.`, requirement: "a keyword no other reply has", provided: k });
    }
  }
  return errors;
}

/** The everyday words among a reply's keywords that were not in it before (they ask for confirmation). */
export function commonReplyWords(keywords: readonly string[], before: readonly string[]): string[] {
  return tooCommon("reply", keywords.filter((k) => !before.includes(k)));
}

/** The active rule whose keyword the whole text is (normalised as for STOP), if any. */
export function matchKeywordReply<R extends KeywordRule>(text: string, rules: readonly R[]): R | null {
  const k = normalizeKeyword(text);
  if (k === "") return null;
  return rules.find((r) => r.isActive && r.keywords.includes(k)) ?? null;
}

/** A contact's tags with a rule's added (in order, no duplicates), kept within `max`. */
export function withTags(tags: readonly string[], add: readonly string[], max: number): string[] {
  const out = [...tags];
  for (const t of add) if (!out.includes(t) && out.length < max) out.push(t);
  return out;
}
