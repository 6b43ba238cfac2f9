/**
 * The pure rules behind SMSGate's whole client API (docs/api-decisions.md, "The SMSGate
 * ecosystem, every call"): the tokens (signing, verifying, expiry, tampering), which scope each
 * call needs, the settings answered snake_case, a retried failure read as Failed, and the events.
 */
import { describe, expect, test } from "bun:test";
import {
  ACCESS_TTL_DEFAULT_SECONDS,
  ACCESS_TTL_MAX_SECONDS,
  looksLikeJwt,
  parseTokenRequest,
  readClaims,
  scopeAllows,
  scopeFor,
  signToken,
  TOKEN_ISSUER,
  verifyToken,
} from "../../../src/domain/smsgate-tokens";
import { snakeCaseSettings, applySmsgateSettings } from "../../../src/domain/smsgate-settings";
import { recipientState } from "../../../src/domain/smsgate-message";
import { SMSGATE_EVENTS, isProduced, smsgateEventOf, textwireEventsOf } from "../../../src/domain/smsgate-webhook";
import { subscribes } from "../../../src/domain/outbound-events";

const NOW = Date.parse("2026-12-07T10:00:00Z");
const claims = { jti: "abcdefghijklmnopqrstu", sub: "acct-1", iss: TOKEN_ISSUER, iat: NOW / 1000, exp: NOW / 1000 + 900, scopes: ["messages:send"] };

describe("tokens", () => {
  test("a signed token verifies with its secret until it expires; another secret, a changed claim or a changed signature do not", () => {
    const token = signToken(claims, "secret-one");
    expect(looksLikeJwt(token)).toBe(true);
    expect(verifyToken(token, "secret-one", NOW)).toEqual(claims);
    expect(verifyToken(token, "secret-one", NOW + 899_000)).not.toBeNull();
    expect(verifyToken(token, "secret-one", NOW + 900_000)).toBeNull();
    expect(verifyToken(token, "secret-two", NOW)).toBeNull();
    const [h, p, s] = token.split(".");
    const widened = Buffer.from(JSON.stringify({ ...claims, scopes: ["all:any"] })).toString("base64url");
    expect(verifyToken(`${h}.${widened}.${s}`, "secret-one", NOW)).toBeNull();
    expect(verifyToken(`${h}.${p}.${s.slice(0, -2)}AA`, "secret-one", NOW)).toBeNull();
    // alg none, another issuer, a token from the future: refused.
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    expect(readClaims(`${none}.${p}.`)).toBeNull();
    expect(verifyToken(signToken({ ...claims, iss: "someone-else" }, "secret-one"), "secret-one", NOW)).toBeNull();
    expect(verifyToken(signToken({ ...claims, iat: NOW / 1000 + 3600, exp: NOW / 1000 + 7200 }, "secret-one"), "secret-one", NOW)).toBeNull();
    // An API key is no JWT; junk is unreadable.
    expect(looksLikeJwt("txwire_sk_" + "a".repeat(40))).toBe(false);
    for (const junk of ["", "a.b.c", "eyJ.eyJ.x", "eyJhbGciOiJIUzI1NiJ9.!!!.x"]) expect(readClaims(junk)).toBeNull();
  });

  test("the request: scopes from SMSGate's list, ttl defaulted and capped", () => {
    expect(parseTokenRequest({ scopes: ["messages:send", "messages:send"] })).toEqual({ ok: true, scopes: ["messages:send"], ttl: ACCESS_TTL_DEFAULT_SECONDS });
    expect(parseTokenRequest({ scopes: ["all:any"], ttl: 10 ** 9 })).toEqual({ ok: true, scopes: ["all:any"], ttl: ACCESS_TTL_MAX_SECONDS });
    expect(parseTokenRequest({ scopes: ["all:any"], ttl: 0 })).toMatchObject({ ok: true, ttl: ACCESS_TTL_DEFAULT_SECONDS });
    for (const bad of [null, [], {}, { scopes: [] }, { scopes: ["tokens:refresh"] }, { scopes: [1] }, { scopes: ["all:any"], ttl: 1.5 }, { scopes: ["all:any"], ttl: "60" }]) {
      expect(parseTokenRequest(bad).ok).toBe(false);
    }
  });

  test("each call's scope, as SMSGate's handlers require them; all:any covers all but refreshing", () => {
    const cases: Array<[string, string, string | null]> = [
      ["POST", "/messages", "messages:send"],
      ["POST", "/message", "messages:send"],
      ["GET", "/messages", "messages:list"],
      ["GET", "/messages/abc", "messages:read"],
      ["DELETE", "/message/abc", "messages:cancel"],
      ["POST", "/messages/inbox/export", "messages:export"],
      ["POST", "/inbox/export", "messages:export"],
      ["GET", "/inbox", "inbox:list"],
      ["POST", "/inbox/refresh", "inbox:refresh"],
      ["GET", "/devices", "devices:list"],
      ["DELETE", "/devices/d1", "devices:delete"],
      ["GET", "/logs", "logs:read"],
      ["GET", "/settings", "settings:read"],
      ["PATCH", "/settings", "settings:write"],
      ["PUT", "/settings", "settings:write"],
      ["GET", "/webhooks", "webhooks:list"],
      ["POST", "/webhooks", "webhooks:write"],
      ["DELETE", "/webhooks/w1", "webhooks:delete"],
      ["POST", "/auth/token", "tokens:manage"],
      ["DELETE", "/auth/token/j1", "tokens:manage"],
      ["POST", "/auth/token/refresh", "tokens:refresh"],
      ["GET", "/health/phones", "devices:list"],
      ["POST", "/devices", null],
    ];
    for (const [m, p, s] of cases) expect([m, p, scopeFor(m, p)]).toEqual([m, p, s]);
    expect(scopeAllows(["all:any"], "settings:write")).toBe(true);
    expect(scopeAllows(["all:any"], "tokens:refresh")).toBe(false);
    expect(scopeAllows(["tokens:refresh"], "tokens:refresh")).toBe(true);
    expect(scopeAllows(["messages:send"], "messages:list")).toBe(false);
  });
});

describe("settings in SMSGate's snake_case", () => {
  test("known keys answered snake_case, whichever spelling came in; unknown keys as given", () => {
    const r = applySmsgateSettings({}, { messages: { limitPeriod: "PerDay", limit_value: 5, work_hours_enabled: true, workHoursStart: "08:00" }, gateway: { notification_channel: "AUTO" }, custom: { someKey: 1 } }, "replace");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(snakeCaseSettings(r.value)).toEqual({ messages: { limit_period: "PerDay", limit_value: 5, work_hours_enabled: true, work_hours_start: "08:00" }, gateway: { notification_channel: "AUTO" }, custom: { someKey: 1 } });
    const bad = applySmsgateSettings({}, { messages: { work_hours_end: "24:00" } }, "merge");
    expect(bad.ok).toBe(false);
  });
});

describe("states and events", () => {
  const base = { refusal: null, hasMessage: true, status: "queued", leased: false, delivered: false, failureReason: null };
  test("a failed attempt Textwire retries reads Failed until a phone takes the new attempt, then Processed", () => {
    expect(recipientState({ ...base, retryReason: "RESULT_ERROR_NO_SERVICE" })).toEqual({ state: "Failed", error: "RESULT_ERROR_NO_SERVICE" });
    expect(recipientState({ ...base, leased: true, retryReason: "RESULT_ERROR_NO_SERVICE" })).toEqual({ state: "Processed", error: null });
    expect(recipientState({ ...base, status: "sent", retryReason: "RESULT_ERROR_NO_SERVICE" })).toEqual({ state: "Sent", error: null });
    expect(recipientState(base)).toEqual({ state: "Pending", error: null });
  });

  test("all 14 events map both ways; the attempt event is for SMSGate registrations only", () => {
    expect(SMSGATE_EVENTS).toHaveLength(14);
    for (const e of SMSGATE_EVENTS) expect(smsgateEventOf(textwireEventsOf(e)[0])).toBe(e);
    expect(textwireEventsOf("sms:failed")).toEqual(["message.failed", "message.attempt_failed"]);
    expect(smsgateEventOf("message.attempt_failed")).toBe("sms:failed");
    expect(SMSGATE_EVENTS.filter(isProduced)).toEqual(["sms:received", "sms:data-received", "sms:sent", "sms:delivered", "sms:failed", "sms:cancelled", "mms:received"]);
    expect(subscribes(["*"], "message.attempt_failed")).toBe(false);
    expect(subscribes(["*"], "mms:received")).toBe(false);
    expect(subscribes(["sms:data-received"], "sms:data-received")).toBe(true);
    expect(subscribes(["*"], "message.failed")).toBe(true);
    expect(subscribes(["message.attempt_failed"], "message.attempt_failed")).toBe(true);
  });
});
