/** The visitor's words for a refused post (docs/api-decisions.md, "Plain words for visitors"). */
import { describe, expect, test } from "bun:test";
import { fieldLabel, refusalFor, visitorSummary } from "../../../src/domain/visitor-words";
import { validateSubmission } from "../../../src/domain/submission";
import { checkCountry, checkInsertedValues } from "../../../src/domain/protection";

describe("fieldLabel", () => {
  test("the owner's label first, then a built-in's plain name, then the name as words", () => {
    expect(fieldLabel("service", { label: " Which service " })).toBe("Which service");
    expect(fieldLabel("phoneNumber", { label: "" })).toBe("Mobile phone number");
    expect(fieldLabel("firstName")).toBe("First name");
    expect(fieldLabel("favoriteColor")).toBe("Favorite color");
    expect(fieldLabel("pick_up_time")).toBe("Pick up time");
  });
});

describe("every field problem has a sentence that names the label", () => {
  const fields = [
    { name: "phoneNumber", type: "phone" as const, label: "Your mobile", validation: { regions: ["US"] } },
    { name: "guests", type: "number" as const, label: "How many guests", validation: { min: 1, max: 8, integer: true } },
    { name: "day", type: "date" as const, label: "Which day", validation: { format: "YYYY-MM-DD" } },
    { name: "site", type: "url" as const, label: "Your website" },
    { name: "code", type: "text" as const, label: "Booking code", validation: { pattern: "^[A-Z]{3}$" } },
  ];
  test.each([
    [{ phoneNumber: "+447911123456" }, "Please enter a mobile phone number (US) in 'Your mobile'."],
    [{ phoneNumber: "+14155550100", guests: "many" }, "Please enter a number in 'How many guests'."],
    [{ phoneNumber: "+14155550100", guests: "9" }, "Please enter 8 or less in 'How many guests'."],
    [{ phoneNumber: "+14155550100", guests: "2.5" }, "Please enter a whole number in 'How many guests'."],
    [{ phoneNumber: "+14155550100", day: "tomorrow" }, "Please enter a date written as YYYY-MM-DD in 'Which day'."],
    [{ phoneNumber: "+14155550100", site: "javascript:alert(1)" }, "Please enter a web address starting with http:// or https:// in 'Your website'."],
    [{ phoneNumber: "+14155550100", code: "ab" }, "Please check what you entered in 'Booking code'."],
  ])("%p", (body, sentence) => {
    const r = validateSubmission(body, fields);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(visitorSummary(r.errors)).toBe(sentence);
      // The developer's words keep the field's name.
      expect(r.errors[0].message).toContain(r.errors[0].field);
    }
  });

  test("the links rule and the country rule", () => {
    const links = checkInsertedValues({ phoneNumber: "+14155550100", custom: { service: "evil.example" } }, ["service"], [{ name: "service", type: "text", label: "Which service" }], false);
    expect(visitorSummary(links)).toBe("Please leave links out of 'Which service'.");
    expect(checkCountry("+447911123456", ["US"])?.visitor).toBe("Please enter a mobile phone number (US).");
  });
});

test("refusals of the whole post have plain words; an unknown code a polite general one", () => {
  expect(refusalFor("RATE_LIMIT_EXCEEDED")).toContain("Please wait a minute");
  expect(refusalFor("SOMETHING_NEW")).toBe("Your message could not be sent. Please try again later.");
  expect(visitorSummary([{ message: "body must be an object" }])).toBe(refusalFor("VALIDATION_ERROR"));
  // An owner's own words without a full stop still read as a sentence among others.
  expect(visitorSummary([{ message: "x", visitor: "Adults only" }, { message: "y", visitor: "Please fill in 'Code'." }])).toBe("Adults only. Please fill in 'Code'.");
});
