/** Dashboard problems in the owner's words (docs/api-decisions.md, "Plain words for visitors"). */
import { describe, expect, test } from "bun:test";
import { contactLabel, labelFrom, plainProblem } from "../../../web/plain-problems";

describe("plainProblem", () => {
  test("an import row's problem names the field by its label, not its API name", () => {
    expect(plainProblem("phoneNumber", "phoneNumber is a landline and cannot receive text messages", contactLabel)).toBe("Phone number: is a landline and cannot receive text messages");
    expect(plainProblem("customFields.Shoe size", "customFields.Shoe size must be at most 500 characters", contactLabel)).toBe("Shoe size: must be at most 500 characters");
    expect(plainProblem("createdAt", "createdAt must be an ISO 8601 timestamp", contactLabel)).toBe("Added on: must be an ISO 8601 timestamp");
    // A whole row has no label: the sentence stands alone.
    expect(plainProblem("row", "row has 3 cells; the header has 4", contactLabel)).toBe("Row has 3 cells; the header has 4");
  });

  test("a setting's problem by the builder's label, its list items by the list's", () => {
    const label = labelFrom({ "settings.allowedCountries": "Phone numbers only from (country codes)", "settings.duplicateWindowMinutes": "Ignore repeats (minutes)" });
    expect(plainProblem("settings.duplicateWindowMinutes", "duplicateWindowMinutes must be an integer from 0 (off) to 1440", label)).toBe("Ignore repeats (minutes): must be an integer from 0 (off) to 1440");
    expect(plainProblem("settings.allowedCountries[1]", "each country must be a two-letter ISO code", label)).toBe("Phone numbers only from (country codes): each country must be a two-letter ISO code");
    expect(plainProblem("settings.unknown", "unknown must be set", label)).toBe("Unknown must be set");
  });
});
