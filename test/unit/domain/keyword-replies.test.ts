import { describe, expect, test } from "bun:test";
import { keywordCollisions, matchKeywordReply, parseKeywordReply, withTags, commonReplyWords } from "../../../src/domain/keyword-replies";
import { DEFAULT_KEYWORD_LISTS } from "../../../src/domain/keywords";

describe("parseKeywordReply", () => {
  test("a create needs keywords and a reply; the rest has defaults; keywords are normalised", () => {
    expect(parseKeywordReply({ keywords: ["hours", " Open! ", "HOURS"], reply: " We're open 9–5. " }, null)).toEqual({
      ok: true,
      value: { keywords: ["HOURS", "OPEN"], reply: "We're open 9–5.", addTags: [], setStatus: null, isActive: true },
      confirmCommonWords: false,
    });
  });
  test("every bad field is named; unknown fields too", () => {
    const r = parseKeywordReply({ keywords: ["!!"], reply: "", addTags: ["a,b"], setStatus: "vip", isActive: "yes", colour: 1 }, null);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field).sort()).toEqual(["addTags[0]", "colour", "isActive", "keywords", "reply", "setStatus"]);
    const missing = parseKeywordReply({}, null);
    if (!missing.ok) expect(missing.errors.map((e) => e.field).sort()).toEqual(["keywords", "reply"]);
    for (const b of [null, [], "x"]) expect(parseKeywordReply(b, null).ok).toBe(false);
  });
  test("an update keeps what it does not name", () => {
    const cur = { keywords: ["HOURS"], reply: "9-5", addTags: ["asked-hours"], setStatus: null, isActive: true };
    expect(parseKeywordReply({ isActive: false }, cur)).toMatchObject({ ok: true, value: { ...cur, isActive: false } });
    expect(parseKeywordReply({ setStatus: "converted", addTags: null }, cur)).toMatchObject({ ok: true, value: { ...cur, setStatus: "converted", addTags: [] } });
  });
});

describe("keywordCollisions", () => {
  test("STOP/START/HELP keywords and another reply's keywords are refused in plain words", () => {
    const errs = keywordCollisions(["STOP", "YES", "INFO", "HOURS", "PRICES"], DEFAULT_KEYWORD_LISTS, [{ id: "x", keywords: ["PRICES"], isActive: false }]);
    expect(errs.map((e) => e.provided)).toEqual(["STOP", "YES", "INFO", "PRICES"]);
    expect(errs[0].message).toContain("stops all texts");
    expect(errs.every((e) => e.field === "keywords")).toBe(true);
  });
});

describe("matchKeywordReply", () => {
  const rules = [
    { id: "off", keywords: ["HOURS"], isActive: false },
    { id: "a", keywords: ["HOURS", "OPEN", "WHEN ARE YOU OPEN"], isActive: true },
  ];
  test.each(["HOURS", "hours?", " Hours! ", "open.", "When are you open?"])("%p is answered", (t) => expect(matchKeywordReply(t, rules)?.id).toBe("a"));
  test.each(["hours please", "what are your hours", "", "open now"])("%p is not", (t) => expect(matchKeywordReply(t, rules)).toBeNull());
});

test("withTags adds without duplicates and within the limit; commonReplyWords names new everyday words", () => {
  expect(withTags(["a"], ["a", "b", "c"], 2)).toEqual(["a", "b"]);
  expect(commonReplyWords(["OK", "HOURS", "THANKS"], ["OK"])).toEqual(["THANKS"]);
});
