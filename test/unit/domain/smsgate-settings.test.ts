import { describe, expect, test } from "bun:test";
import {
  SMSGATE_SETTINGS_MAX_BYTES, applySmsgateSettings, checkSmsgateSettings, phoneLimitOf, phoneSettingsFrom, sendRateOf, smsgateSettingsView, type PhoneSettings,
} from "../../../src/domain/smsgate-settings";

/** SMSGate's settings document (docs/api-decisions.md, "SMSGate third-party API: devices, health, settings"). */
const fieldsOf = (r: ReturnType<typeof checkSmsgateSettings>) => (r.ok ? [] : r.errors.map((e) => e.field));

describe("checking a settings body", () => {
  test("SMSGate's camelCase keys pass; client-go's snake_case spellings become camelCase", () => {
    const r = checkSmsgateSettings({ messages: { limitPeriod: "PerHour", limit_value: 30, sim_selection_mode: "RoundRobin" }, ping: { interval_seconds: 20 } });
    expect(r).toEqual({ ok: true, value: { messages: { limitPeriod: "PerHour", limitValue: 30, simSelectionMode: "RoundRobin" }, ping: { intervalSeconds: 20 } } });
  });

  test("unknown sections and keys are kept as given, even one named __proto__", () => {
    const body = JSON.parse('{"future": {"x": [1, 2]}, "messages": {"somethingNew": "a"}, "__proto__": {"polluted": true}}');
    const r = checkSmsgateSettings(body);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.future).toEqual({ x: [1, 2] });
    expect(r.value.messages).toEqual({ somethingNew: "a" });
    expect(Object.hasOwn(r.value, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(r.value)).__proto__).toEqual({ polluted: true });
  });

  test("every bad value is named, each as SMSGate's validator would refuse it", () => {
    const r = checkSmsgateSettings({
      messages: { sendIntervalMin: 0, limitPeriod: "PerWeek", limitValue: 1.5, simSelectionMode: 2, processingOrder: "ANY" },
      ping: { intervalSeconds: "10" },
      webhooks: { internetRequired: "yes", retryCount: -1 },
      logs: "30",
    });
    expect(fieldsOf(r).sort()).toEqual([
      "logs", "messages.limitPeriod", "messages.limitValue", "messages.processingOrder", "messages.sendIntervalMin",
      "messages.simSelectionMode", "ping.intervalSeconds", "webhooks.internetRequired", "webhooks.retryCount",
    ]);
  });

  test("a number beyond what the app can read (a Java int) is refused", () => {
    expect(fieldsOf(checkSmsgateSettings({ messages: { limitValue: 2_147_483_648 } }))).toEqual(["messages.limitValue"]);
    expect(checkSmsgateSettings({ messages: { limitValue: 2_147_483_647 } }).ok).toBe(true);
  });

  test("what Textwire owns (server address, token, encryption) is refused unless empty", () => {
    const r = checkSmsgateSettings({ gateway: { cloudUrl: "https://x", private_token: "t" }, encryption: { passphrase: "p" } });
    expect(fieldsOf(r).sort()).toEqual(["encryption.passphrase", "gateway.cloudUrl", "gateway.privateToken"]);
    expect(checkSmsgateSettings({ webhooks: { signingKey: "" }, encryption: { passphrase: null } }).ok).toBe(true);
  });

  test("the signing key is 8 to 256 characters (either spelling); shorter, longer, blank or not text is refused", () => {
    expect(checkSmsgateSettings({ webhooks: { signingKey: "12345678" } }).ok).toBe(true);
    expect(checkSmsgateSettings({ webhooks: { signing_key: "k".repeat(256) } }).ok).toBe(true);
    for (const bad of ["k", "1234567", "k".repeat(257), "          ", 12345678, true, {}]) {
      expect(fieldsOf(checkSmsgateSettings({ webhooks: { signingKey: bad } }))).toEqual(["webhooks.signingKey"]);
    }
  });

  test("the same key twice in both spellings with different values is refused; the same value is fine", () => {
    expect(fieldsOf(checkSmsgateSettings({ messages: { limitValue: 5, limit_value: 6 } }))).toEqual(["messages.limitValue"]);
    expect(checkSmsgateSettings({ messages: { limitValue: 5, limit_value: 5 } })).toEqual({ ok: true, value: { messages: { limitValue: 5 } } });
  });

  test("a body that is not an object is refused", () => {
    for (const b of [null, [], "x", 3]) expect(fieldsOf(checkSmsgateSettings(b))).toEqual(["body"]);
  });
});

describe("replacing and merging", () => {
  const stored = { messages: { limitPeriod: "PerMinute", limitValue: 10 }, ping: { intervalSeconds: 30 }, extra: 1 };

  test("PUT replaces the whole document (nulls dropped)", () => {
    expect(applySmsgateSettings(stored, { messages: { limitValue: 3, simSelectionMode: null } }, "replace")).toEqual({ ok: true, value: { messages: { limitValue: 3 } }, signingKey: null });
  });

  test("PATCH merges each section; null removes a key or a section", () => {
    const r = applySmsgateSettings(stored, { messages: { limitValue: 20, limitPeriod: null }, ping: null, logs: { lifetimeDays: 7 } }, "merge");
    expect(r).toEqual({ ok: true, value: { messages: { limitValue: 20 }, extra: 1, logs: { lifetimeDays: 7 } }, signingKey: null });
  });

  test("the signing key is taken out of the document (PUT and PATCH); a section that held only it is not stored", () => {
    expect(applySmsgateSettings(stored, { webhooks: { signingKey: "new-key-123" } }, "merge")).toEqual({ ok: true, value: stored, signingKey: "new-key-123" });
    expect(applySmsgateSettings(stored, { webhooks: { signing_key: "new-key-123", retryCount: 3 } }, "replace")).toEqual({ ok: true, value: { webhooks: { retryCount: 3 } }, signingKey: "new-key-123" });
    const withHooks = { webhooks: { retryCount: 2 } };
    expect(applySmsgateSettings(withHooks, { webhooks: { signingKey: "new-key-123" } }, "merge")).toEqual({ ok: true, value: withHooks, signingKey: "new-key-123" });
  });

  test("an empty or null signing key leaves the key as it is", () => {
    for (const k of ["", null]) {
      expect(applySmsgateSettings(stored, { webhooks: { signingKey: k } }, "merge")).toEqual({ ok: true, value: stored, signingKey: null });
    }
  });

  test("a bad signing key with other changes changes nothing", () => {
    const r = applySmsgateSettings(stored, { messages: { limitValue: 3 }, webhooks: { signingKey: "short" } }, "merge");
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(["webhooks.signingKey"]);
  });

  test("the view shows the key only when given, beside the document's own webhook keys", () => {
    expect(smsgateSettingsView({ webhooks: { retryCount: 2 } }, "k-12345678")).toEqual({ webhooks: { retryCount: 2, signingKey: "k-12345678" } });
    expect(smsgateSettingsView({ ping: { intervalSeconds: 5 } }, null)).toEqual({ ping: { intervalSeconds: 5 } });
  });

  test("an interval's max under its min is refused, also when the min was stored before", () => {
    const withMin = { messages: { sendIntervalMin: 10 } };
    const r = applySmsgateSettings(withMin, { messages: { sendIntervalMax: 5 } }, "merge");
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(["messages.sendIntervalMax"]);
    expect(applySmsgateSettings(withMin, { messages: { sendIntervalMax: 10 } }, "merge").ok).toBe(true);
  });

  test("a document past the size cap is refused", () => {
    const r = applySmsgateSettings({}, { big: "x".repeat(SMSGATE_SETTINGS_MAX_BYTES) }, "replace");
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(["body"]);
  });
});

describe("what the phones get", () => {
  const own: PhoneSettings = {
    messages: { send_interval_min: 1, send_interval_max: 1, limit_period: "PerMinute", limit_value: 60 },
    ping: { interval_seconds: 60 },
    webhooks: { signing_key: "key" },
    gateway: { notification_channel: "SSE_ONLY" },
  };

  test("the document's values over Textwire's, in the app's snake_case; Textwire's own keys stay", () => {
    const doc = {
      messages: { limitPeriod: "PerHour", limitValue: 100, simSelectionMode: "Random", sendIntervalMin: 5, sendIntervalMax: 9 },
      webhooks: { retryCount: 3, internetRequired: false },
      gateway: { notificationChannel: "AUTO" },
      logs: { lifetimeDays: 14 },
      receiver: { contentProviderEnabled: true },
      unknown: { x: 1 },
    };
    expect(phoneSettingsFrom(own, doc, 60)).toEqual({
      messages: { send_interval_min: 5, send_interval_max: 9, limit_period: "PerHour", limit_value: 100, sim_selection_mode: "Random" },
      ping: { interval_seconds: 60 },
      webhooks: { signing_key: "key", retry_count: 3, internet_required: false },
      gateway: { notification_channel: "SSE_ONLY" },
      logs: { lifetime_days: 14 },
      receiver: { content_provider_enabled: true },
    });
  });

  test("a ping interval longer than the offline window allows is shortened; a shorter one is kept", () => {
    expect(phoneSettingsFrom(own, { ping: { intervalSeconds: 600 } }, 60).ping).toEqual({ interval_seconds: 60 });
    expect(phoneSettingsFrom(own, { ping: { intervalSeconds: 15 } }, 60).ping).toEqual({ interval_seconds: 15 });
  });

  test("the send rate: the phone's own, never above the period limit or the shortest interval, per minute, at least 1", () => {
    expect(sendRateOf(60, {})).toBe(60);
    expect(sendRateOf(60, { messages: { limitPeriod: "Disabled", limitValue: 5 } })).toBe(60);
    expect(sendRateOf(60, { messages: { limitPeriod: "PerMinute", limitValue: 12 } })).toBe(12);
    expect(sendRateOf(60, { messages: { limitPeriod: "PerMinute", limitValue: 500 } })).toBe(60);
    expect(sendRateOf(60, { messages: { limitPeriod: "PerHour", limitValue: 600 } })).toBe(10);
    expect(sendRateOf(60, { messages: { limitPeriod: "PerDay", limitValue: 100 } })).toBe(1);
    expect(sendRateOf(60, { messages: { sendIntervalMin: 4 } })).toBe(15);
    expect(sendRateOf(60, { messages: { limitPeriod: "PerMinute", limitValue: 30, sendIntervalMin: 6 } })).toBe(10);
    // A value without a period counts per minute, as Textwire tells the phone.
    expect(sendRateOf(60, { messages: { limitValue: 7 } })).toBe(7);
  });

  test("half a limit is completed so the phone and Textwire agree", () => {
    expect(phoneLimitOf({}, 20)).toBeNull();
    expect(phoneLimitOf({ messages: { limitValue: 7 } }, 20)).toEqual({ period: "PerMinute", value: 7 });
    expect(phoneLimitOf({ messages: { limitPeriod: "PerHour" } }, 20)).toEqual({ period: "PerHour", value: 1200 });
    expect(phoneLimitOf({ messages: { limitPeriod: "Disabled" } }, 20)).toEqual({ period: "Disabled", value: 20 });
    expect(phoneSettingsFrom(own, { messages: { limitPeriod: "PerHour" } }, 60).messages).toMatchObject({ limit_period: "PerHour", limit_value: 3600 });
  });
});
