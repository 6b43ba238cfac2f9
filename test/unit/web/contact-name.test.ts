import { describe, expect, test } from "bun:test";
import { splitName } from "../../../web/contact-names";

describe("the dashboard's one Name field", () => {
  test("splits at the first space: first word the first name, the rest the last name", () => {
    expect(splitName("Ann Marie Lee")).toEqual({ firstName: "Ann", lastName: "Marie Lee" });
    expect(splitName("  Bob   Stone ")).toEqual({ firstName: "Bob", lastName: "Stone" });
    expect(splitName("Cher")).toEqual({ firstName: "Cher", lastName: null });
  });
  test("an emptied field clears both names", () => {
    expect(splitName("   ")).toEqual({ firstName: null, lastName: null });
  });
});
