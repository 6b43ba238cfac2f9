import { describe, expect, test } from "bun:test";
import { importTarget } from "../../../src/domain/import-columns";
import { importRowBody, parseImportHeader } from "../../../src/domain/contact-export";

describe("import column names", () => {
  test("aliases, ignoring case, spaces, underscores and hyphens", () => {
    for (const h of ["phoneNumber", "Phone", "PHONE_NUMBER", "phone-number", " Phone Number ", "Mobile", "Cell", "Telephone"]) expect(importTarget(h)).toEqual({ kind: "base", name: "phoneNumber" });
    for (const h of ["First Name", "first_name", "FIRSTNAME", "Given Name"]) expect(importTarget(h)).toEqual({ kind: "base", name: "firstName" });
    for (const h of ["Last Name", "last-name", "Surname"]) expect(importTarget(h)).toEqual({ kind: "base", name: "lastName" });
    for (const h of ["E-mail", "Email Address", "email", "E-Mail Address"]) expect(importTarget(h)).toEqual({ kind: "base", name: "email" });
    expect(importTarget("Tags")).toEqual({ kind: "base", name: "tags" });
    expect(importTarget("Name")).toEqual({ kind: "fullName" });
    expect(importTarget("customFields.Company Size")).toEqual({ kind: "custom", name: "Company Size" });
    expect(importTarget("custom_fields.plan")).toEqual({ kind: "custom", name: "plan" });
    expect(importTarget("messageCount")).toEqual({ kind: "ignored" });
    expect(importTarget("Favourite colour")).toBeNull();
  });

  test("Name is split at its first space into first and last name", () => {
    const h = parseImportHeader(["Phone", "Name"]);
    if (!h.ok) throw new Error(JSON.stringify(h.errors));
    expect(importRowBody(h.header, ["+12015550100", "  Mary Ann  van Dyke "]).body).toEqual({ phoneNumber: "+12015550100", firstName: "Mary", lastName: "Ann  van Dyke" });
    expect(importRowBody(h.header, ["+12015550100", "Cher"]).body).toEqual({ phoneNumber: "+12015550100", firstName: "Cher", lastName: "" });
  });

  test("two columns for one field, no phone column, unknown columns: errors name the columns", () => {
    const both = parseImportHeader(["Phone", "Name", "First Name"]);
    expect(both.ok ? [] : both.errors.map((e) => e.field)).toEqual(["First Name"]);
    const noPhone = parseImportHeader(["First Name", "Email"]);
    expect(noPhone.ok).toBe(false);
    if (noPhone.ok) return;
    expect(noPhone.errors[0].field).toBe("phoneNumber");
    expect(noPhone.errors[0].message).toContain("First Name, Email");
    expect(noPhone.errors[0].message).toContain("Mobile");
    const unknown = parseImportHeader(["Phone", "Shoe size"]);
    expect(unknown.ok ? "" : unknown.errors[0].message).toContain("Phone Number");
  });
});
