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
  test("queued, with its position and time", () => {
    const o = describeTestAnswer(200, { status: "success", data: { messageId: "m1", queuePosition: 3, estimatedDelivery: "2026-05-01T10:00:00Z" } }, fmt);
    expect(o).toEqual({ kind: "queued", messageId: "m1", text: "Queued at position 3 in the queue. Expected to go out around <2026-05-01T10:00:00Z>." });
  });
  test("a duplicate points at the first message; a suppressed one has none", () => {
    expect(describeTestAnswer(200, { data: { messageId: "m1", duplicate: true, queuePosition: 1 } }, fmt)).toMatchObject({ kind: "duplicate", messageId: "m1" });
    const s = describeTestAnswer(200, { data: { messageId: null, suppressed: "recipient-limit", queuePosition: null } }, fmt);
    expect(s.kind).toBe("suppressed");
    expect(s.messageId).toBeNull();
    expect(s.text).toContain("per-number limit");
  });
  test("refusals: validation errors listed, known codes explained, others in the API's words", () => {
    const v = describeTestAnswer(400, { code: "VALIDATION_ERROR", errors: [{ field: "phoneNumber", message: "not a number" }] }, fmt);
    expect(v).toMatchObject({ kind: "refused", errors: [{ field: "phoneNumber", message: "not a number" }] });
    expect(describeTestAnswer(403, { code: "ORIGIN_NOT_ALLOWED", message: "x" }, fmt).text).toContain("Allowed websites");
    expect(describeTestAnswer(404, { code: "FORM_NOT_FOUND", message: "Form not found" }, fmt).text).toBe("Refused, nothing was saved: Form not found.");
  });
});
