import { describe, expect, test } from "bun:test";
import { describeTestAnswer, draftFromSettings, errorsFor, recommendedDraft, settingsFromDraft, SECRET_MASK } from "../../../web/form-protection";

describe("the form builder's protection inputs", () => {
  test("a v1 form without protection settings shows the API's defaults and saves them unchanged in meaning", () => {
    const d = draftFromSettings({ timezone: "UTC" });
    expect(d).toMatchObject({ duplicateWindowMinutes: "", ipLimitPerMinute: "", allowedCountries: "", allowedOrigins: "", honeypotOn: true, honeypotField: "_gotcha", allowLinksInValues: false, captchaProvider: "" });
    expect(settingsFromDraft(d)).toEqual({
      successUrl: null,
      errorUrl: null,
      duplicateWindowMinutes: 0,
      ipLimitPerMinute: null,
      recipientLimitPerDay: null,
      allowedCountries: null,
      allowedOrigins: null,
      honeypotField: "_gotcha",
      allowLinksInValues: false,
      captcha: null,
    });
  });

  test("round trip of every setting; lists typed loosely become clean lists", () => {
    const stored = {
      successUrl: "https://shop.example/thanks",
      errorUrl: "https://shop.example/oops",
      duplicateWindowMinutes: 10,
      ipLimitPerMinute: 5,
      recipientLimitPerDay: 3,
      allowedCountries: ["US", "CA"],
      allowedOrigins: ["https://shop.example", "https://www.shop.example"],
      honeypotField: "website",
      allowLinksInValues: true,
      captcha: { provider: "hcaptcha", secret: SECRET_MASK, siteKey: "site-1" },
    };
    const d = draftFromSettings(stored);
    expect(d.captchaSecret).toBe("");
    expect(d.storedCaptchaProvider).toBe("hcaptcha");
    // An untouched secret box keeps the stored secret (the API takes the mask as "keep").
    expect(settingsFromDraft(d)).toEqual(stored);
    const typed = settingsFromDraft({ ...d, allowedCountries: " us ,ca;gb ", allowedOrigins: "https://a.example\n\n https://b.example ", captchaSecret: " new-secret " });
    expect(typed.allowedCountries).toEqual(["US", "CA", "GB"]);
    expect(typed.allowedOrigins).toEqual(["https://a.example", "https://b.example"]);
    expect(typed.captcha).toEqual({ provider: "hcaptcha", secret: "new-secret", siteKey: "site-1" });
  });

  test("a changed captcha provider without a secret sends none (the API names settings.captcha.secret); turning the honeypot off sends null", () => {
    const d = draftFromSettings({ captcha: { provider: "hcaptcha", secret: SECRET_MASK } });
    expect(settingsFromDraft({ ...d, captchaProvider: "turnstile" }).captcha).toEqual({ provider: "turnstile", secret: "" });
    expect(settingsFromDraft({ ...d, captchaProvider: "" }).captcha).toBeNull();
    expect(settingsFromDraft({ ...d, honeypotOn: false }).honeypotField).toBeNull();
  });

  test("numbers that are not numbers are sent as typed, so the API's error names the field", () => {
    const d = draftFromSettings({});
    expect(settingsFromDraft({ ...d, ipLimitPerMinute: "ten" }).ipLimitPerMinute).toBe("ten");
    expect(settingsFromDraft({ ...d, recipientLimitPerDay: " 7 " }).recipientLimitPerDay).toBe(7);
  });

  test("the recommended protections fill in the values of docs/forms.md and the account's country", () => {
    const r = settingsFromDraft(recommendedDraft(draftFromSettings({ honeypotField: null, allowLinksInValues: true }), "GB"));
    expect(r).toMatchObject({ duplicateWindowMinutes: 10, ipLimitPerMinute: 10, recipientLimitPerDay: 5, allowedCountries: ["GB"], honeypotField: "_gotcha", allowLinksInValues: false });
  });

  test("errorsFor picks an input's errors and its sub-fields', not a neighbour's", () => {
    const errors = [
      { field: "settings.allowedOrigins[1]", message: "bad origin" },
      { field: "settings.captcha.secret", message: "secret is required" },
      { field: "fields[0].name", message: "bad name" },
      { field: "name", message: "name taken" },
    ];
    expect(errorsFor(errors, "settings.allowedOrigins")).toEqual(["bad origin"]);
    expect(errorsFor(errors, "settings.captcha")).toEqual(["secret is required"]);
    expect(errorsFor(errors, "name")).toEqual(["name taken"]);
    expect(errorsFor(errors, "fields[1].name")).toEqual([]);
  });
});

describe("a test submission's answer in plain words", () => {
  const fmt = (iso: string) => `<${iso}>`;
  test("checked: the server's words, the text a visitor would get and the notes", () => {
    const o = describeTestAnswer(200, { status: "success", message: "The form accepts these values.", data: { test: true, text: "Hi Ada", segments: 1, notes: ["Posts are accepted only from https://shop.example."], sent: null } }, fmt);
    expect(o).toEqual({ kind: "checked", messageId: null, text: "The form accepts these values.", preview: { text: "Hi Ada", segments: 1 }, notes: ["Posts are accepted only from https://shop.example."] });
  });
  test("sent to the owner's phone: the message and its time, or that it waits for a phone", () => {
    const body = { message: "The test text is on its way to +14155550131.", data: { text: "Hi", segments: 1, notes: [], sent: { messageId: "m1", to: "+14155550131", queuePosition: 1, estimatedDelivery: "2026-05-01T10:00:00Z" } } };
    expect(describeTestAnswer(200, body, fmt)).toMatchObject({ kind: "sent", messageId: "m1", text: "The test text is on its way to +14155550131. Expected to go out around <2026-05-01T10:00:00Z>." });
    expect(describeTestAnswer(200, body, fmt, false)).toMatchObject({ kind: "sent", waitsForPhone: true });
  });
  test("refusals: the server's plain words (labels, not field names), known codes explained", () => {
    const v = describeTestAnswer(400, { code: "VALIDATION_ERROR", message: "Please leave links out of 'Which service'.", errors: [{ field: "service", message: "service must not contain a link" }] }, fmt);
    expect(v).toEqual({ kind: "refused", messageId: null, text: "Your website would refuse these values: Please leave links out of 'Which service'." });
    expect(describeTestAnswer(409, { code: "RECIPIENT_OPTED_OUT", message: "x" }, fmt).text).toContain("replied STOP");
    expect(describeTestAnswer(404, { code: "FORM_NOT_FOUND", message: "Form not found" }, fmt).text).toBe("Not tested: this form no longer exists.");
  });
});
