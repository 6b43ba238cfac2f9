/**
 * The opt-out decisions of src/services/opt-outs.ts, on their own: what suppresses a submission,
 * what a manual send refuses, how an API body and an import row say "opted out", and the keyword
 * decision on a fresh database (the API tests in test/api/sending/opt-outs.test.ts cover the whole path).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { migrate } from "../../../src/db/migrate";
import { AppError } from "../../../src/errors";
import { findContactByPhone, insertRespondedContact } from "../../../src/db/stores/contacts";
import { applyKeyword, consentGiven, consentVouched, mayText, parseImportOptOut, parseOptOutFields, refuseIfOptedOut, setOptOut } from "../../../src/services/opt-outs";
import { admit } from "../../../src/services/sending";

describe("suppression at enqueue", () => {
  test("a submission: an opted-out number first, then a consent box not ticked", () => {
    const why = (optedOut: boolean, field: string | null, values: Record<string, unknown>) => {
      const a = admit({ recipient: { optedOut }, consent: { field, values } });
      return a.ok ? null : a.reason;
    };
    expect(why(true, null, {})).toBe("opted-out");
    expect(why(true, "agree", { agree: "on" })).toBe("opted-out");
    expect(why(false, "agree", {})).toBe("no-consent");
    expect(why(false, "agree", { agree: "no" })).toBe("no-consent");
    expect(why(false, "agree", { agree: "on" })).toBeNull();
    expect(why(false, null, {})).toBeNull();
  });

  test("an opted-out number gets only the replies the law asks for; a contact the owner added needs no consent box", () => {
    expect(mayText(null)).toBe(true);
    expect(mayText({ optedOut: true })).toBe(false);
    expect(mayText({ optedOut: true }, { keywordReply: true })).toBe(true);
    expect(consentGiven("agree", {}, true)).toBe(true);
    expect(consentGiven("agree", {})).toBe(false);
    expect(consentVouched({ source: "import" })).toBe(true);
    expect(consentVouched({ source: "webhook" })).toBe(false);
    expect(consentVouched({})).toBe(false);
  });

  test("a manual send to an opted-out contact is refused with RECIPIENT_OPTED_OUT; anyone else passes", () => {
    expect(() => refuseIfOptedOut(null)).not.toThrow();
    expect(() => refuseIfOptedOut({ id: "c1", phoneNumber: "+12015550100", optedOut: false })).not.toThrow();
    let err: unknown;
    try {
      refuseIfOptedOut({ id: "c1", phoneNumber: "+12015550100", optedOut: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("RECIPIENT_OPTED_OUT");
    expect((err as AppError).message).toContain("+12015550100");
  });
});

describe("how a body and an import row say it", () => {
  test("optedOut must be a boolean; consent on create only, manual or api", () => {
    expect(parseOptOutFields({ firstName: "A", optedOut: true }, "update")).toMatchObject({ body: { firstName: "A" }, split: true, optedOut: true, errors: [] });
    expect(parseOptOutFields({ optedOut: "yes" }, "update").errors.map((e) => e.field)).toEqual(["optedOut"]);
    expect(parseOptOutFields({ consent: { source: "manual" } }, "create").consentSource).toBe("manual");
    expect(parseOptOutFields({ consent: { source: "manual" } }, "update").errors.map((e) => e.field)).toEqual(["consent"]);
    expect(parseOptOutFields({ consent: { source: "webhook" } }, "create").errors.map((e) => e.field)).toEqual(["consent"]);
    expect(parseOptOutFields([1], "create")).toEqual({ body: [1], split: false, errors: [] });
  });

  test("an import row: true / false / empty, and an ISO optedOutAt (default now)", () => {
    const now = Date.parse("2026-11-20T10:00:00.000Z");
    const errors: Array<{ field: string; message: string }> = [];
    expect(parseImportOptOut("true", undefined, now, errors)).toEqual({ optedOut: true, at: "2026-11-20T10:00:00.000Z" });
    expect(parseImportOptOut("false", "2026-01-02T03:04:05Z", now, errors)).toEqual({ optedOut: false, at: "2026-01-02T03:04:05.000Z" });
    expect(parseImportOptOut(undefined, undefined, now, errors).optedOut).toBeUndefined();
    expect(errors).toEqual([]);
    parseImportOptOut("maybe", "yesterday", now, errors);
    expect(errors.map((e) => e.field)).toEqual(["optedOut", "optedOutAt"]);
  });
});

describe("the keyword decision", () => {
  let db: Database;
  const phone = "+12015550100";
  const at = "2026-11-20T10:00:00.000Z";
  const now = Date.parse(at);
  beforeEach(() => {
    db = new Database(":memory:");
    migrate(db);
    db.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?)", [at]);
    insertRespondedContact(db, { id: "c1", accountId: "a1", phone, lastResponseAt: at, createdAt: at });
  });
  afterEach(() => db.close());
  const keyword = (k: "opt-out" | "opt-in" | "help" | null) =>
    applyKeyword(db, "a1", k, { contactId: "c1", contact: findContactByPhone(db, "a1", phone), phone, receivedIso: at, updatedAt: at }, now);

  test("STOP opts out and asks for the confirmation; START opts back in and asks for its reply", () => {
    expect(keyword("opt-out")).toEqual({ cancelled: [], replyKey: "optOutReply" });
    expect(findContactByPhone(db, "a1", phone)).toMatchObject({ optedOut: true, optedOutAt: at });
    expect(keyword("opt-in")).toEqual({ cancelled: [], replyKey: "optInReply" });
    expect(findContactByPhone(db, "a1", phone)).toMatchObject({ optedOut: false, optedOutAt: null });
  });

  test("START from a contact that never opted out sends nothing; HELP always answers; other text decides nothing", () => {
    expect(keyword("opt-in")).toEqual({ cancelled: [], replyKey: null });
    expect(keyword("help")).toEqual({ cancelled: [], replyKey: "helpReply" });
    expect(keyword(null)).toEqual({ cancelled: [], replyKey: null });
    expect(findContactByPhone(db, "a1", phone)?.optedOut).toBe(false);
  });

  test("a STOP from a number the owner opted out (no confirmation yet) gets the one confirmation", () => {
    const clock = () => now;
    expect(setOptOut(db, clock, "a1", "c1", phone, true, at)).toEqual({ cancelled: [], changed: true });
    expect(setOptOut(db, clock, "a1", "c1", phone, true, at).changed).toBe(false);
    expect(keyword("opt-out").replyKey).toBe("optOutReply");
  });
});
