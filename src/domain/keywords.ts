/**
 * Keywords in received texts: opt-out, opt-in and help, and the owner's keyword replies. Pure.
 *
 * A keyword is one word or a phrase ("STOP", "stop texting me"). A text matches it when the whole
 * text, normalised, is that keyword: NFKC (full-width "ＳＴＯＰ" reads as STOP), curly apostrophes
 * made straight, punctuation and spaces around it dropped, runs of spaces inside made one, upper-
 * cased. So "STOP", " stop ", "Stop!", "\"STOP.\"" and "Stop texting me!" match their keyword;
 * "STOP 12345" and "stop by later" do not: other words make it a sentence, which is never read as
 * a keyword. docs/api-decisions.md, "Keyword phrases".
 */
export type KeywordKind = "opt-out" | "opt-in" | "help";
export const KEYWORD_KINDS: readonly KeywordKind[] = ["opt-out", "opt-in", "help"];

export interface KeywordLists {
  optOutKeywords: string[];
  optInKeywords: string[];
  helpKeywords: string[];
}

export const DEFAULT_OPT_OUT_KEYWORDS = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"];
export const DEFAULT_OPT_IN_KEYWORDS = ["START", "UNSTOP", "YES", "SUBSCRIBE"];
export const DEFAULT_HELP_KEYWORDS = ["HELP", "INFO"];

export const DEFAULT_KEYWORD_LISTS: Readonly<KeywordLists> = Object.freeze({
  optOutKeywords: DEFAULT_OPT_OUT_KEYWORDS,
  optInKeywords: DEFAULT_OPT_IN_KEYWORDS,
  helpKeywords: DEFAULT_HELP_KEYWORDS,
});

/** A keyword or phrase holds at most this many characters (a short sentence). */
export const MAX_KEYWORD_LENGTH = 40;

/**
 * One keyword as stored (already normalised): words of letters and digits, with single spaces and
 * punctuation inside ("STOP TEXTING ME", "DON'T TEXT ME"), beginning and ending with a letter or
 * digit (what `normalizeKeyword` leaves of a text that can match).
 */
export const KEYWORD_RE = /^[\p{L}\p{N}](?:[\p{L}\p{N}\p{P}\p{M} ]*[\p{L}\p{N}\p{M}])?$/u;

const AROUND = /^[\p{P}\s]+|[\p{P}\s]+$/gu;

/** A text as keywords are compared: see the module comment. "" when nothing is left. */
export function normalizeKeyword(text: string): string {
  return text
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u02BC]/g, "'")
    .replace(AROUND, "")
    .replace(/\s+/gu, " ")
    .toUpperCase();
}

/** An owner's keyword, as typed, made the stored form; null when it cannot ever match a text. */
export function parseKeyword(typed: unknown): string | null {
  if (typeof typed !== "string") return null;
  const k = normalizeKeyword(typed);
  return k.length <= MAX_KEYWORD_LENGTH && KEYWORD_RE.test(k) ? k : null;
}

/** Which list the text is in (opt-out first, so a keyword in two lists opts out). */
export function keywordOf(text: string, lists: KeywordLists): KeywordKind | null {
  const k = normalizeKeyword(text);
  if (k === "") return null;
  if (lists.optOutKeywords.includes(k)) return "opt-out";
  if (lists.optInKeywords.includes(k)) return "opt-in";
  if (lists.helpKeywords.includes(k)) return "help";
  return null;
}

/**
 * Everyday answers ("ok", "yes", "thanks"): as a keyword, a customer who only meant to answer
 * would be opted out, opted in or sent an automatic reply. Saving one asks for confirmation
 * (docs/api-decisions.md, "Keyword phrases"). A list's own default words ("YES" to opt back in,
 * as carriers use it) are never "too common" for that list.
 */
export const COMMON_WORDS: readonly string[] = [
  "YES", "NO", "OK", "OKAY", "K", "KK", "Y", "N", "YEP", "YEAH", "YUP", "NOPE", "SURE", "FINE",
  "ME", "YOU", "I", "HI", "HELLO", "HEY", "THANKS", "THANK YOU", "THX", "TY", "PLEASE",
  "GOOD", "GREAT", "COOL", "DONE", "WHO", "WHAT", "WHY", "HOW", "WHEN", "WHERE", "LOL", "MAYBE",
];

/** What each list's keywords do, for the words "too common" for it. "reply": a keyword reply. */
export type KeywordUse = KeywordKind | "reply";

const DEFAULTS_OF: Record<KeywordUse, readonly string[]> = {
  "opt-out": DEFAULT_OPT_OUT_KEYWORDS,
  "opt-in": DEFAULT_OPT_IN_KEYWORDS,
  help: DEFAULT_HELP_KEYWORDS,
  reply: [],
};

/**
 * The keywords (stored form) too common for `use`: everyday answers and single characters ("C",
 * "1": menu answers such as "Reply C to cancel"), less the list's own defaults.
 */
export function tooCommon(use: KeywordUse, keywords: readonly string[]): string[] {
  return keywords.filter((k) => !DEFAULTS_OF[use].includes(k) && (COMMON_WORDS.includes(k) || [...k].length === 1));
}

/** Whether a posted consent checkbox value says yes ("on", "true", "yes", "1", true…). */
export function isConsentGiven(v: unknown): boolean {
  if (v === true) return true;
  if (typeof v === "number") return v !== 0 && Number.isFinite(v);
  if (typeof v !== "string") return false;
  const t = v.trim().toLowerCase();
  return t !== "" && !["false", "0", "no", "off", "n", "null", "undefined", "unchecked"].includes(t);
}
