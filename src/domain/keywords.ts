/**
 * Keywords in received texts: opt-out, opt-in and help. Pure.
 *
 * A text is a keyword when, trimmed and compared case-insensitively, it is one word — letters
 * and digits — with nothing around it but punctuation and spaces: "STOP", " stop ", "Stop!",
 * "\"STOP.\"". "STOP 12345" and "stop by later" are not: a second word makes it a sentence.
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

/** One keyword: a single word of letters and digits (what `keywordOf` can ever match). */
export const KEYWORD_RE = /^[\p{L}\p{N}]{1,30}$/u;

const ONE_WORD = /^[\p{P}\s]*([\p{L}\p{N}]+)[\p{P}\s]*$/u;

/** The text's single word, upper-cased, or null when the text is not one word. */
export function keywordWord(text: string): string | null {
  // NFKC: full-width "ＳＴＯＰ" and ligatures read as the plain letters a person meant.
  const m = ONE_WORD.exec(text.normalize("NFKC").trim());
  return m ? m[1].toUpperCase() : null;
}

/** Which list the text's word is in (opt-out first, so a word in two lists opts out). */
export function keywordOf(text: string, lists: KeywordLists): KeywordKind | null {
  const word = keywordWord(text);
  if (word === null) return null;
  if (lists.optOutKeywords.includes(word)) return "opt-out";
  if (lists.optInKeywords.includes(word)) return "opt-in";
  if (lists.helpKeywords.includes(word)) return "help";
  return null;
}

/** Whether a posted consent checkbox value says yes ("on", "true", "yes", "1", true…). */
export function isConsentGiven(v: unknown): boolean {
  if (v === true) return true;
  if (typeof v === "number") return v !== 0 && Number.isFinite(v);
  if (typeof v !== "string") return false;
  const t = v.trim().toLowerCase();
  return t !== "" && !["false", "0", "no", "off", "n", "null", "undefined", "unchecked"].includes(t);
}
