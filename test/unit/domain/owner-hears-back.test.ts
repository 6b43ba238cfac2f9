import { describe, expect, test } from "bun:test";
import { validateFormFields } from "../../../src/domain/form-definition";
import { MAX_CUSTOM_VALUE_LENGTH, MAX_LONG_TEXT_LENGTH, validateSubmission } from "../../../src/domain/submission";
import { embedSnippet } from "../../../src/domain/embed";
import { labelledValues, requestPreview } from "../../../src/domain/submission-values";
import { noticeEmail, noticeText } from "../../../src/domain/team-notice";
import { defaultStopOnReply } from "../../../src/domain/automation-steps";
import { dateInWords, dateVariables } from "../../../src/domain/date-words";

/** docs/api-decisions.md, "The owner hears back": the pure rules. */
describe("longText fields", () => {
  const fields = [{ name: "message", type: "longText" as const, label: "Message" }];

  test("a long text keeps its lines and may be longer than a one-line value, up to its own bound", () => {
    const text = "Do you bake gluten-free bread?\nAnd on Sundays?";
    const ok = validateSubmission({ phoneNumber: "+14155550101", message: text }, fields);
    expect(ok.ok && ok.value.custom.message).toBe(text);
    const long = "x".repeat(MAX_CUSTOM_VALUE_LENGTH + 100);
    expect(validateSubmission({ phoneNumber: "+14155550101", message: long }, fields).ok).toBe(true);
    // The same length in a short text field is refused.
    expect(validateSubmission({ phoneNumber: "+14155550101", message: long }, [{ name: "message", type: "text" }]).ok).toBe(false);
    const tooLong = validateSubmission({ phoneNumber: "+14155550101", message: "x".repeat(MAX_LONG_TEXT_LENGTH + 1) }, fields);
    expect(tooLong.ok).toBe(false);
    const minMax = validateSubmission({ phoneNumber: "+14155550101", message: "hi" }, [{ name: "message", type: "longText", validation: { minLength: 5 } }]);
    expect(!minMax.ok && minMax.errors[0].field).toBe("message");
  });

  test("a form may declare one; a pattern is a short text's only", () => {
    expect(validateFormFields([{ name: "message", type: "longText", validation: { maxLength: 2000 } }])).toEqual([]);
    expect(validateFormFields([{ name: "message", type: "longText", validation: { pattern: "x" } }]).map((e) => e.field)).toEqual(["fields[0].validation.pattern"]);
  });

  test("the embed code makes it a textarea, and adds the consent box when the form has one", () => {
    const html = embedSnippet({ formName: "Rosa's Bakery", webhookUrl: "https://x.example/v1/forms/f/webhook", fields: [...fields, { name: "firstName", type: "text" }], honeypotField: null, captcha: null, consentField: "consent" });
    expect(html).toContain('<textarea id="tw-message" name="message" rows="5"></textarea>');
    expect(html).not.toContain('type="textarea"');
    expect(html).toContain('<input id="tw-consent" name="consent" type="checkbox" value="yes">');
    expect(html).toContain("I agree to receive text messages from Rosa&#39;s Bakery. Reply STOP to opt out.");
    expect(embedSnippet({ formName: "F", webhookUrl: "https://x.example/w", fields, honeypotField: null, captcha: null })).not.toContain("checkbox");
  });
});

describe("what the team reads", () => {
  test("values in the form's order with its labels, undeclared keys after, in words", () => {
    const v = labelledValues([{ name: "message", label: "Message" }, { name: "firstName" }], { phoneNumber: "+1415", favoriteCake: "Lemon", firstName: "Ann", message: "Hi" });
    expect(v).toEqual([
      { field: "message", label: "Message", value: "Hi" },
      { field: "firstName", label: "First name", value: "Ann" },
      { field: "phoneNumber", label: expect.any(String), value: "+1415" },
      { field: "favoriteCake", label: "Favorite cake", value: "Lemon" },
    ]);
    expect(requestPreview(v)).toBe("Hi");
    expect(labelledValues([], null)).toEqual([]);
  });

  test("one notice, a reply, and a batch in one text", () => {
    const one = { kind: "submission" as const, who: "Ann", formName: "Contact us", preview: "Do you bake gluten-free bread?", path: "/inbox/1" };
    expect(noticeText([one], "https://sms.example.com")).toBe("New request from Ann (Contact us): Do you bake gluten-free bread? https://sms.example.com/inbox/1");
    const reply = { kind: "reply" as const, who: "Bob", formName: null, preview: "Thanks!", path: "/conversations/c" };
    expect(noticeText([reply], "https://s")).toBe("Bob replied: Thanks! https://s/conversations/c");
    const many = [one, { ...one, who: "Carla" }, { ...one, who: "Dan" }, { ...one, who: "Eve" }, reply];
    expect(noticeText(many, "https://s")).toBe("4 new requests and 1 reply from Ann, Carla, Dan and 2 more https://s/inbox");
    expect(noticeText([reply, { ...reply, who: "Fay" }], "https://s")).toBe("2 replies from Bob, Fay https://s/conversations");
    expect(noticeText([{ ...one, optedOut: true }], "https://s")).toBe(
      "New request from Ann (Contact us; opted out of texts: reply another way): Do you bake gluten-free bread? https://s/inbox/1",
    );
    const long = noticeText([{ ...one, preview: "y".repeat(500) }], "https://s");
    expect(long.length).toBeLessThan(200);
    const mail = noticeEmail([one, reply], "https://s", "Rosa's Bakery");
    expect(mail.subject).toBe("Rosa's Bakery: 1 new request and 1 reply from Ann, Bob");
    expect(mail.text).toContain("Do you bake gluten-free bread?\n  https://s/inbox/1");
  });
});

describe("stopOnReply's default", () => {
  test("false only when every step is relative to a date", () => {
    expect(defaultStopOnReply([{ relativeTo: "pickup" }, { relativeTo: "pickup" }])).toBe(false);
    expect(defaultStopOnReply([{ relativeTo: "pickup" }, {}])).toBe(true);
    expect(defaultStopOnReply([{}])).toBe(true);
    expect(defaultStopOnReply([])).toBe(true);
  });
});

describe("dates in texts", () => {
  test("a date field reads as people write it, in the form's language; other ways by suffix", () => {
    const v = dateVariables([{ name: "pickup", type: "date" }], { pickup: "2026-12-10" }, "en-US", "2026-12-07");
    expect(v).toEqual({ pickup: "Thu, Dec 10", "pickup.long": "Thursday, December 10", "pickup.numeric": "12/10/2026", "pickup.iso": "2026-12-10", "pickup.asSent": "2026-12-10" });
    // Another year says it; a day-first field is read in its own format.
    const uk = dateVariables([{ name: "party", type: "date", validation: { format: "DD/MM/YYYY" } }], { party: "02/01/2027" }, "en-GB", "2026-12-07");
    expect(uk.party).toBe("Sat, 2 Jan 2027");
    expect(uk["party.iso"]).toBe("2027-01-02");
    expect(dateInWords("2026-12-10", "fr", 2026)).toBe("jeu. 10 déc.");
    // Not a date field, no value, or an unreadable one: nothing.
    expect(dateVariables([{ name: "note", type: "text" }, { name: "pickup", type: "date" }], { note: "2026-12-10" }, "en-US", "2026-12-07")).toEqual({});
    expect(dateVariables([{ name: "pickup", type: "date" }], { pickup: "soon" }, "en-US", "2026-12-07")).toEqual({});
  });
});
