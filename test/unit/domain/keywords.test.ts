import { describe, expect, test } from "bun:test";
import { DEFAULT_KEYWORD_LISTS, isConsentGiven, keywordOf, normalizeKeyword, parseKeyword, tooCommon } from "../../../src/domain/keywords";
import { applySettingsPatch, commonWordsAdded, renderReply, resolveAccountSettings, DEFAULT_REPLIES, MAX_REPLY_LENGTH } from "../../../src/domain/account-settings";

const k = (text: string) => keywordOf(text, DEFAULT_KEYWORD_LISTS);

describe("keywordOf: the whole text, or one word with only punctuation around it", () => {
  test.each(["STOP", "stop", "Stop", "  stop  ", "Stop!", "STOP.", "stop!!!", '"STOP"', "\tSTOP\n", "¡stop!", "ＳＴＯＰ", "Stop ."])("%p opts out", (t) => {
    expect(k(t)).toBe("opt-out");
  });
  test.each(["STOPALL", "unsubscribe", "Cancel", "end", "QUIT", "optout", "Revoke"])("%p opts out (every default word)", (t) => {
    expect(k(t)).toBe("opt-out");
  });
  test.each(["START", "unstop", "Yes!", "subscribe"])("%p opts in", (t) => expect(k(t)).toBe("opt-in"));
  test.each(["HELP", "help?", "Info"])("%p asks for help", (t) => expect(k(t)).toBe("help"));
  test.each([
    "STOP 12345",
    "stop by later",
    "Please stop",
    "don't stop",
    "STOP STOP",
    "stopp",
    "opt out",
    "STOP 😡",
    "",
    "   ",
    "!!!",
    "yes please",
    "I need help",
    "S T O P",
  ])("%p is not a keyword", (t) => expect(k(t)).toBeNull());
  test("the word is upper-cased for matching; custom lists are used as given", () => {
    expect(normalizeKeyword(" arrêt! ")).toBe("ARRÊT");
    const lists = { optOutKeywords: ["ARRET", "ARRÊT"], optInKeywords: ["OUI"], helpKeywords: ["AIDE"] };
    expect(keywordOf("Arrêt", lists)).toBe("opt-out");
    expect(keywordOf("oui", lists)).toBe("opt-in");
    expect(keywordOf("STOP", lists)).toBeNull();
  });
});

describe("keyword phrases: a phrase matches when the whole text is that phrase", () => {
  const lists = { ...DEFAULT_KEYWORD_LISTS, optOutKeywords: [...DEFAULT_KEYWORD_LISTS.optOutKeywords, "STOP TEXTING ME", "DON'T TEXT ME"] };
  test.each(["Stop texting me", "STOP TEXTING ME", "stop texting me!", "  Stop   texting\tme. ", "\"Stop texting me\"", "ＳＴＯＰ ｔｅｘｔｉｎｇ ｍｅ", "Don’t text me", "don't text me!!"])(
    "%p opts out",
    (t) => expect(keywordOf(t, lists)).toBe("opt-out"),
  );
  test.each(["stop by later", "me", "texting", "Please stop texting me", "stop texting me now", "stop, texting me", "STOP TEXTING"])("%p is not a keyword", (t) =>
    expect(keywordOf(t, lists)).toBeNull(),
  );
  test("a typed keyword is stored normalised, one phrase; what can never match is refused", () => {
    expect(parseKeyword("  stop   texting me! ")).toBe("STOP TEXTING ME");
    expect(parseKeyword("Don’t text me")).toBe("DON'T TEXT ME");
    for (const bad of ["", "  ", "!!!", "x".repeat(41), "STOP 😡", 5, null]) expect(parseKeyword(bad)).toBeNull();
  });
  test("a list keeps a multi-word phrase as one keyword", () => {
    const r = applySettingsPatch({}, { optOutKeywords: ["STOP", "stop texting me"] });
    expect(r).toEqual({ ok: true, stored: { optOutKeywords: ["STOP", "STOP TEXTING ME"] } });
  });
});

describe("everyday words ask for confirmation", () => {
  test("per kind: a list's own defaults never count (YES opts in by default)", () => {
    expect(tooCommon("opt-out", ["STOP", "ME", "OK", "YES", "STOP TEXTING ME", "C"])).toEqual(["ME", "OK", "YES", "C"]);
    expect(tooCommon("opt-in", ["START", "YES", "OK"])).toEqual(["OK"]);
    expect(tooCommon("help", ["HELP", "INFO", "HI", "THANK YOU"])).toEqual(["HI", "THANK YOU"]);
    expect(tooCommon("reply", ["HOURS", "OK", "1"])).toEqual(["OK", "1"]);
  });
  test("only words a change adds are named", () => {
    const before = resolveAccountSettings({ optOutKeywords: ["STOP", "ME"] });
    const after = resolveAccountSettings({ optOutKeywords: ["STOP", "ME", "OK"], helpKeywords: ["HELP", "HI"] });
    expect(commonWordsAdded(before, after)).toEqual([
      { field: "optOutKeywords", words: ["OK"] },
      { field: "helpKeywords", words: ["HI"] },
    ]);
    expect(commonWordsAdded(before, before)).toEqual([]);
    expect(commonWordsAdded(resolveAccountSettings({}), resolveAccountSettings({}))).toEqual([]);
  });
});

describe("isConsentGiven", () => {
  test.each([true, 1, "on", "true", "yes", "1", "Y", "checked", "I agree"])("%p is consent", (v) => expect(isConsentGiven(v)).toBe(true));
  test("everything else is not", () => {
    for (const v of [false, 0, "", " ", "off", "false", "no", "0", "N", null, undefined, {}, []]) expect(isConsentGiven(v)).toBe(false);
  });
});

describe("account settings", () => {
  test("defaults: the issue's words and replies naming the business", () => {
    const r = resolveAccountSettings({});
    expect(r.optOutKeywords).toEqual(["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"]);
    expect(r.optInKeywords).toEqual(["START", "UNSTOP", "YES", "SUBSCRIBE"]);
    expect(r.helpKeywords).toEqual(["HELP", "INFO"]);
    expect(renderReply(r.optOutReply, "Acme Plumbing")).toBe("You're unsubscribed from Acme Plumbing. Reply START to resubscribe.");
    expect(renderReply(r.helpReply, "Acme Plumbing")).toContain("Acme Plumbing");
    expect(renderReply(r.helpReply, "Acme Plumbing")).toContain("Reply STOP to unsubscribe");
  });
  test("a patch replaces given keys, null restores the default, words are upper-cased and de-duplicated", () => {
    const a = applySettingsPatch({}, { optOutKeywords: ["stop", "Arret", "STOP"], helpReply: "  Call us on 555-0100.  " });
    expect(a).toEqual({ ok: true, stored: { optOutKeywords: ["STOP", "ARRET"], helpReply: "Call us on 555-0100." } });
    if (!a.ok) return;
    const b = applySettingsPatch(a.stored, { helpReply: null });
    expect(b).toEqual({ ok: true, stored: { optOutKeywords: ["STOP", "ARRET"] } });
    expect(resolveAccountSettings(b.ok ? b.stored : {}).helpReply).toBe(DEFAULT_REPLIES.helpReply);
  });
  test("every problem is named; nothing is applied", () => {
    const r = applySettingsPatch({}, {
      optOutKeywords: [],
      optInKeywords: ["opt in!", "😀"],
      helpKeywords: "HELP",
      optOutReply: "",
      optInReply: "x".repeat(MAX_REPLY_LENGTH + 1),
      helpReply: 5,
      colour: "red",
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field).sort()).toEqual(["colour", "helpKeywords", "helpReply", "optInKeywords", "optInReply", "optOutKeywords", "optOutReply"]);
  });
  test("a word in two lists is refused", () => {
    const r = applySettingsPatch({}, { helpKeywords: ["HELP", "stop"] });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatchObject({ field: "helpKeywords", provided: "STOP" });
  });
  test("the body must be an object", () => {
    for (const b of [null, [], "x", 3]) expect(applySettingsPatch({}, b).ok).toBe(false);
  });
});
